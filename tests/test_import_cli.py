"""``stratagate import`` (preview, commit, choices, undo), ``imports`` and ``export``."""

import json
import re
from pathlib import Path

import pytest
from imports import candidate, document

from stratagate_plugin.cli.main import main

FACTS = document(
    candidate("Lives in Lyon", "The user lives in Lyon.", category="identity"),
    candidate("Works at Acme", "The user is a data engineer at Acme."),
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {
        "facts": (FACTS, "facts.json"),
        "list": ("Likes hiking. Has a dog named Rex.\n", "saved.txt"),  # prose: recovered
    }
    paths = {}
    for key, (text, name) in made.items():
        paths[key] = tmp_path / name
        paths[key].write_text(text, encoding="utf-8")
    paths["db"] = tmp_path / "m.db"
    return paths


def job_id(out: str) -> str:
    found = re.search(r"import (imp_\w+)", out)
    assert found is not None
    return found.group(1)


def batch_id(out: str) -> str:
    found = re.search(r"batch (blk_\w+)", out)
    assert found is not None
    return found.group(1)


def commit_args(job: str, choices: Path, db: str) -> tuple[str, ...]:
    return (
        "import",
        "--commit",
        "--job",
        job,
        "--choices",
        str(choices),
        "--db",
        db,
        "--space",
        "s",
    )


def test_preview_then_commit_then_undo(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    db = str(files["db"])
    code, out, err = run(capsys, "import", str(files["facts"]), "--db", db, "--space", "s")
    assert code == 0 and "import: 2/2 items" in err
    assert "ready, 2 items" in out and re.search(r"^\s+0  ADD\s+1\.00  Lives in Lyon", out, re.M)
    job = job_id(out)
    code, out, _ = run(capsys, "import", "--commit", "--job", job, "--db", db, "--space", "s")
    assert code == 0 and "2 events written, 0 ignored" in out
    batch = batch_id(out)
    code, out, _ = run(capsys, "import", str(files["facts"]), "--db", db, "--space", "s")
    assert out.count("IGNORE    1.00") == 2  # the same file again: all duplicates
    code, out, _ = run(capsys, "imports", "--db", db, "--space", "s", "--json")
    listed = json.loads(out)
    assert [b["id"] for b in listed["batches"]] == [batch] and len(listed["jobs"]) == 2
    code, out, _ = run(capsys, "import", "--undo", batch, "--db", db, "--space", "s")
    assert code == 0 and "2 events removed" in out
    code, _, err = run(capsys, "import", "--undo", batch, "--db", db)
    assert (
        code == 2 and err.strip() == f"stratagate: error: import batch {batch} was already undone"
    )


def test_choices_decide_the_items_that_need_confirmation(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    db = str(files["db"])
    code, out, _ = run(capsys, "import", str(files["list"]), "--db", db, "--space", "s")
    assert "recovered" in out and "2 items marked ? need your choice" in out
    assert re.search(r"\?\s+1\s+ADD .*Has a dog named Rex", out)  # the file's order
    job = job_id(out)
    choices = tmp_path / "choices.json"
    choices.write_text(json.dumps({"job": job, "choices": {"1": "add"}}), encoding="utf-8")
    args = commit_args(job, choices, db)
    code, out, _ = run(capsys, *args)
    assert code == 0 and "1 events written, 1 ignored" in out
    code, out, _ = run(capsys, "export", "--db", db, "--space", "s")
    assert [c["title"] for c in json.loads(out)["candidates"]] == ["Has a dog named Rex"]


def test_commit_of_a_new_file_at_once_and_export_to_a_file(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    db, out_file = str(files["db"]), tmp_path / "out.json"
    assert (
        run(capsys, "import", str(files["facts"]), "--commit", "--db", db, "--space", "s")[0] == 0
    )
    code, out, err = run(capsys, "export", "--db", db, "--space", "s", "--out", str(out_file))
    assert code == 0 and out == "" and "exported 2 events of s" in err
    exported = json.loads(out_file.read_text(encoding="utf-8"))
    assert exported["schemaVersion"] == "stratagate.external-memory.v2"
    code, out, _ = run(capsys, "import", str(out_file), "--db", db, "--space", "s")
    assert out.count("IGNORE") == 2


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["import"], "name the FILE to import"),
        (["import", "FACTS", "--choices", "CHOICES"], "--job and --choices go with --commit"),
        (["import", "--undo", "blk_x", "FACTS"], "--undo takes only a batch id"),
        (["import", "missing.json"], "missing.json: No such file"),
        (["import", "ZIP"], "is not UTF-8 text"),
        (
            ["import", "FACTS", "--format", "v2", "--commit", "--choices", "CHOICES"],
            "not an item index",
        ),
        (["import", "--commit", "--job", "imp_nothing"], "no import job with id 'imp_nothing'"),
        (["export", "--space", "nowhere"], "no memory space called 'nowhere'"),
    ],
)
def test_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, Path],
    tmp_path: Path,
    argv: list[str],
    problem: str,
) -> None:
    (tmp_path / "archive.zip").write_bytes(b"PK\x03\x04\x14\x00\x08\x00\x08\x00\xff\xfe\x00")
    (tmp_path / "choices.json").write_text('{"first": "ADD"}', encoding="utf-8")
    names = {
        "FACTS": files["facts"],
        "ZIP": tmp_path / "archive.zip",
        "CHOICES": tmp_path / "choices.json",
    }
    resolved = [str(names.get(arg, arg)) if arg in names else arg for arg in argv]
    if resolved[-1] == "missing.json":
        resolved[-1] = str(tmp_path / "missing.json")
    code, _, err = run(capsys, *resolved, "--db", str(files["db"]))
    assert code == 2 and problem in err and err.count("\n") == 1


def test_a_job_of_another_space_or_choices_of_another_job_are_refused(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    db = str(files["db"])
    job = job_id(run(capsys, "import", str(files["facts"]), "--db", db, "--space", "s")[1])
    code, _, err = run(capsys, "import", "--commit", "--job", job, "--db", db, "--space", "t")
    assert code == 2 and f"import {job} belongs to space s, not t" in err
    choices = tmp_path / "choices.json"
    choices.write_text(json.dumps({"job": "imp_other", "choices": {"0": "ADD"}}), encoding="utf-8")
    args = commit_args(job, choices, db)
    code, _, err = run(capsys, *args)
    assert code == 2 and f"the choices are for import imp_other, not {job}" in err
    choices.write_text(json.dumps({"7": "ADD"}), encoding="utf-8")
    code, _, err = run(capsys, *args)
    assert code == 2 and f"item 7 is not in import {job}" in err
    code, _, err = run(capsys, "import", "--undo", "blk_nothing", "--db", db, "--space", "s")
    assert code == 2 and "no import batch blk_nothing in space s" in err
