"""The offline agent never echoes itself into memory, says when memory is off, and the
chat loop's slash commands are never turns."""

import os
import subprocess
import sys
from pathlib import Path

from stratagate_plugin.harness.agent import Agent
from stratagate_plugin.harness.pm import make_plugin_manager
from stratagate_plugin.harness.profiles import Profile
from stratagate_plugin.harness.runtime import Host
from stratagate_plugin.harness.sessions import open_session
from stratagate_plugin.memory_plugin.offline_agent import OfflineAgent
from tests.test_plugin_e2e import make_host


async def ask(host: Host, session: str, text: str) -> str:
    result = await Agent(host, OfflineAgent()).run_turn(open_session(session, "t", host.cwd), text)
    assert result.ok, result.error
    return result.answer


async def test_an_answer_from_memory_is_not_evidence_the_next_time(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path, block_turn_size=1) as host:
        await ask(host, "monday", "The spring sale starts on March 3rd")
        first = await ask(host, "tuesday", "When does the spring sale start?")
        second = await ask(host, "wednesday", "When does the spring sale start?")
    assert "March 3rd" in first and "March 3rd" in second
    for answer in (first, second):
        facts = [line for line in answer.splitlines() if line.startswith("- ")]
        assert len(facts) == 1, answer  # one line per fact: not "You said: X" and "X"
        assert "From what you told me" not in facts[0]  # never its own earlier answer


async def test_with_memory_off_the_agent_says_so(tmp_path: Path) -> None:
    async with Host(make_plugin_manager([]), Profile(name="bare"), cwd=tmp_path) as host:
        noted = await ask(host, "s", "The kiln fires on Friday")
        asked = await ask(host, "s", "When does the kiln fire?")
    assert noted == "Memory is off in this profile, so I won't remember that."
    assert asked == "Memory is off in this profile, so I can't look that up."


def test_slash_commands_are_handled_by_the_loop_and_never_recorded(tmp_path: Path) -> None:
    env = {**os.environ, "STRATAGATE_HOME": str(tmp_path)}
    chat = [sys.executable, "-m", "stratagate_plugin.cli.main", "chat", "--session", "s1"]
    done = subprocess.run(
        chat,
        input="/help\nthe kiln fires on friday\n/space\n/bogus\n/exit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "/space    which memory space" in done.stdout
    assert "unknown command /bogus" in done.stdout
    assert "2 messages" in done.stdout or "1 block" in done.stdout  # one turn, not four
    session = (tmp_path / "sessions" / "s1.jsonl").read_text()
    assert "/help" not in session and "/space" not in session and "/bogus" not in session
    once = [*chat[:-2], "--message", "/help"]
    done = subprocess.run(once, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and "/exit" in done.stdout
    assert "/help" not in (tmp_path / "sessions" / "s1.jsonl").read_text()
