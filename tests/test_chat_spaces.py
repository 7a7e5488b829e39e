"""The memory spaces a new conversation may choose (issue 27), in process: what the
memory plugin offers through ``session_spaces``, and that the chosen space is where the
conversation's turn goes. The browser's view: tests/test_browser_chat_spaces.py."""

from pathlib import Path

from webapp import memory_of, post, web_app

from stratagate_plugin.core.clock import utc_now
from stratagate_plugin.harness.chat import ChatMessage
from stratagate_plugin.harness.pm import call_hook
from stratagate_plugin.harness.sessions import (
    TurnRecord,
    open_session,
    read_session,
    record_turn,
    session_path,
)
from stratagate_plugin.harness.types import SpaceChoice

GARDEN = "sg:project:/srv/garden"
FACT = "My sister Ana moved to Porto in March."


async def test_hook_session_spaces_offers_the_default_then_each_space_with_memory(
    tmp_path: Path,
) -> None:
    """Two spaces share the name "garden": each is offered by its whole name."""
    project = tmp_path / "shop"
    project.mkdir()
    async with web_app(project) as (_, host, client):
        memory = memory_of(host)
        await memory.blocks.append_turn(
            GARDEN, "g1", user="I planted tomatoes.", assistant="Noted."
        )
        await memory.blocks.append_turn(
            "sg:project:/srv/other/garden", "g2", user="Hi.", assistant="Hi."
        )
        [choices] = await call_hook(host.pm, "session_spaces", host=host)
        started = await post(client, "/chat/start", data={"text": FACT, "space": GARDEN})
        spaces = await memory.spaces.names()
    assert choices[0] == SpaceChoice("", "shop")
    assert {choice.value for choice in choices[1:]} == {GARDEN, "sg:project:/srv/other/garden"}
    assert {choice.name for choice in choices[1:]} == {GARDEN, "sg:project:/srv/other/garden"}
    assert started.status_code == 303
    assert f"sg:project:{project.resolve()}" not in spaces  # nothing recorded there


async def test_with_only_the_default_space_there_is_nothing_to_choose(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, _host, client):
        page = (await client.get("/chat")).text
    assert 'name="space"' not in page
    assert "memory space" in page  # still said which one it is


def test_a_session_file_keeps_the_space_chosen_for_it(tmp_path: Path) -> None:
    chosen = open_session("chosen", "default", tmp_path)
    chosen.memory_space = GARDEN
    plain = open_session("plain", "default", tmp_path)
    for session in (chosen, plain):
        at = utc_now()
        record = TurnRecord(turn=1, outcome="completed", started_at=at, ended_at=at)
        record_turn(session, [ChatMessage(role="user", content=FACT)], record)
    assert read_session(session_path("chosen")).memory_space == GARDEN
    assert read_session(session_path("plain")).memory_space is None
    assert "memory_space" not in session_path("plain").read_text().splitlines()[0]
