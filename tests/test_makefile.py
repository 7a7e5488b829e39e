"""`make test` sets a bare Debian machine up by itself (issue 27): the Makefile runs
.ci/system-packages before the check, and the script's choices are seen through fake
dpkg/apt-get/sudo/id executables that log what they were asked."""

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "system-packages"
PACKAGES = "chromium fonts-wqy-microhei postgresql"

FAKES = {
    # dpkg-query prints the status of the packages in $FAKE_INSTALLED, "deinstall ok
    # config-files" for those in $FAKE_REMOVED, and fails for any other.
    "dpkg-query": 'echo "dpkg-query $*" >>"$FAKE_LOG"; eval "package=\\$$#"; '
    'case " $FAKE_INSTALLED " in *" $package "*) printf "install ok installed"; exit 0;; esac; '
    'case " $FAKE_REMOVED " in *" $package "*) printf "deinstall ok config-files";; '
    "*) exit 1;; esac",
    "apt-get": 'echo "apt-get $*" >>"$FAKE_LOG"',
    "id": 'echo "$FAKE_UID"',
    "sudo": 'echo "sudo $*" >>"$FAKE_LOG"; shift; "$@"',
    "sudo-with-password": 'echo "sudo $*" >>"$FAKE_LOG"; exit 1',
}


def recipe(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.MULTILINE)
    assert match is not None, f"no {target} target"
    return [line.strip() for line in match.group(1).splitlines()]


def run(
    tmp_path: Path, *, uid: int, tools: set[str], installed: str = "", removed: str = ""
) -> tuple[int, str, str]:
    """Run the script with only the named fake tools (and `env`) on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "env").symlink_to("/usr/bin/env")
    for tool in tools:
        fake = bin_dir / tool.removesuffix("-with-password")
        fake.write_text(f"#!/bin/sh\n{FAKES[tool]}\n", encoding="utf-8")
        fake.chmod(0o755)
    log = tmp_path / "log"
    log.touch()
    environment = {
        "PATH": str(bin_dir),
        "FAKE_LOG": str(log),
        "FAKE_UID": str(uid),
        "FAKE_INSTALLED": installed,
        "FAKE_REMOVED": removed,
    }
    done = subprocess.run(
        ["/bin/sh", str(SCRIPT)], env=environment, capture_output=True, text=True, timeout=60
    )
    return done.returncode, log.read_text(encoding="utf-8"), done.stderr


def after_checks(log: str) -> list[str]:
    """What the script did after asking dpkg-query about each package."""
    return [line for line in log.splitlines() if not line.startswith("dpkg-query ")]


def test_make_test_installs_system_packages_before_the_check_and_ci_runs_only_make_test() -> None:
    steps = recipe("test")
    assert steps[0] == ".ci/system-packages"
    assert "check" in steps[1] and any("pytest" in line for line in recipe("check"))
    assert os.access(SCRIPT, os.X_OK)
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci_run.splitlines() if line and not line.startswith("#")]
    assert commands[-1] == "make test" and "apt-get" not in ci_run


def test_nothing_is_run_when_every_package_is_installed(tmp_path: Path) -> None:
    code, log, stderr = run(tmp_path, uid=1000, tools={"dpkg-query", "id"}, installed=PACKAGES)
    assert (code, stderr) == (0, "")
    assert log.splitlines() == [
        f"dpkg-query -W -f=${{Status}} {package}" for package in PACKAGES.split()
    ]


def test_root_installs_only_the_missing_package_with_apt_get(tmp_path: Path) -> None:
    tools = {"dpkg-query", "id", "apt-get", "sudo"}
    code, log, _ = run(tmp_path, uid=0, tools=tools, installed="fonts-wqy-microhei postgresql")
    assert code == 0
    assert after_checks(log) == ["apt-get update -qq", "apt-get install -y -qq chromium"]


def test_a_package_removed_with_its_configuration_left_is_installed_again(
    tmp_path: Path,
) -> None:
    tools = {"dpkg-query", "id", "apt-get"}
    code, log, _ = run(
        tmp_path, uid=0, tools=tools, installed="fonts-wqy-microhei postgresql", removed="chromium"
    )
    assert code == 0 and log.splitlines()[-1] == "apt-get install -y -qq chromium"


def test_a_user_with_sudo_installs_through_non_interactive_sudo(tmp_path: Path) -> None:
    code, log, _ = run(tmp_path, uid=1000, tools={"dpkg-query", "id", "apt-get", "sudo"})
    assert code == 0
    assert after_checks(log) == [
        "sudo -n true",
        "sudo -n apt-get update -qq",
        "apt-get update -qq",
        f"sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq {PACKAGES}",
        f"apt-get install -y -qq {PACKAGES}",
    ]


def test_without_root_or_sudo_one_line_names_the_packages_and_fails(tmp_path: Path) -> None:
    code, log, stderr = run(tmp_path, uid=1000, tools={"dpkg-query", "id", "apt-get"})
    assert code != 0 and "apt-get" not in log
    assert len(stderr.splitlines()) == 1 and PACKAGES in stderr and "sudo" in stderr


def test_a_sudo_that_wants_a_password_is_not_waited_for(tmp_path: Path) -> None:
    tools = {"dpkg-query", "id", "apt-get", "sudo-with-password"}
    code, log, stderr = run(tmp_path, uid=1000, tools=tools, installed="chromium")
    assert code != 0 and after_checks(log) == ["sudo -n true"]
    assert len(stderr.splitlines()) == 1 and "fonts-wqy-microhei" in stderr


def test_without_apt_get_one_line_names_the_packages_and_fails(tmp_path: Path) -> None:
    code, _, stderr = run(tmp_path, uid=0, tools={"dpkg-query", "id"})
    assert code != 0
    assert stderr.splitlines() == [
        f"make test needs the Debian packages {PACKAGES} (no apt-get here): "
        "install them with apt-get as root"
    ]


def make_dry_run(*argv: str) -> str:
    """The last command ``make -n`` would run: what the target itself does."""
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(ROOT), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_make_run_takes_a_port_and_keeps_the_default_without_one() -> None:
    assert make_dry_run("run", "PORT=8400") == ".venv/bin/stratagate serve --port 8400"
    assert make_dry_run("run").split() == [".venv/bin/stratagate", "serve"]
