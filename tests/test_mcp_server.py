"""``stratagate mcp`` driven as an MCP client drives it: the SDK's stdio client spawning the
command in a fresh home, talking JSON-RPC over the pipes."""

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from browser import server_env
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.harness.tools import as_tool
from stratagate_plugin.memory_plugin.hooks import TOOLS
from stratagate_plugin.memory_plugin.runtime import MemoryRuntime
from stratagate_plugin.memory_plugin.settings import validated
from stratagate_plugin.memory_plugin.tools import PREFIX, memory_tools

COMMAND = [sys.executable, "-m", "stratagate_plugin.cli.main", "mcp"]
POLLS = 300  # a bounded wait for the background derivation (0.1 s apart)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A home whose default profile seals a block every two turns, and a project folder."""
    profiles = tmp_path / "home" / "profiles"
    profiles.mkdir(parents=True)
    profile = {
        "plugins": ["stratagate-memory"],
        "settings": {"stratagate-memory": {"block_turn_size": 2}},
    }
    (profiles / "default.yml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    (tmp_path / "project").mkdir()
    return tmp_path


@asynccontextmanager
async def connected(root: Path, *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=COMMAND[0],
        args=[*COMMAND[1:], *args],
        env=server_env(root / "home"),
        cwd=str(root / "project"),
    )
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured result; a result marked as an error fails the test."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The error text of a call the server must refuse as a tool error."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, text_of(result)
    return text_of(result)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def record(client: Client, *turns: tuple[str, str], **extra: Any) -> list[dict[str, Any]]:
    return [
        await call(client, "memory_record_turn", user=user, assistant=assistant, **extra)
        for user, assistant in turns
    ]


async def poll(client: Client, tool: str, query: str) -> dict[str, Any]:
    """Search until the background derivation has produced a hit (bounded); the empty
    batches on the way are closed with nothing adopted."""
    for _ in range(POLLS):
        found = await call(client, tool, query=query)
        if found["results"]:
            return found
        await call(client, "memory_record_use", batch_id=found["batchId"], evidence_refs=[])
        await anyio.sleep(0.1)
    raise AssertionError(f"{tool} found nothing for {query!r} after {POLLS} tries")


LISBON = [
    ("My sister Alice moved to Lisbon last March.", "Noted: Alice lives in Lisbon now."),
    ("She works at a bakery near the river.", "A bakery by the river, got it."),
]


async def test_tools_are_the_plugins_with_their_schemas_and_record_turn(
    root: Path, memory: StrataGate
) -> None:
    async with connected(root) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.instructions
    assert sorted(listed) == sorted([*TOOLS, "memory_record_turn"])
    assert all((tool.description or "").startswith(PREFIX) for tool in listed.values())
    runtime = MemoryRuntime(memory, validated({}), root / "project")
    for tool in map(as_tool, memory_tools(runtime)):  # what the harness's agent is offered
        assert (listed[tool.name].description, listed[tool.name].input_schema) == (
            tool.description,
            tool.parameters,
        )
    search = listed["memory_search_events"].input_schema
    assert search["required"] == ["query"] and search["additionalProperties"] is False
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (
        1,
        20,
    )
    assess = listed["memory_assess"].input_schema
    assert sorted(assess["required"]) == [
        "evidence_refs",
        "fit",
        "next_strategy",
        "verdict",
    ]
    assert len(assess["properties"]["next_strategy"]["enum"]) == 9
    recording = listed["memory_record_turn"].input_schema
    assert sorted(recording["required"]) == ["assistant", "user"]
    assert "session" in recording["properties"] and "turn_id" in recording["properties"]
    assert instructions is not None and "memory_record_turn" in instructions
    assert "memory_assess" in instructions


async def test_recorded_turns_are_derived_searched_assessed_and_used(root: Path) -> None:
    async with connected(root) as client:
        first, second = await record(client, *LISBON)
        assert first["turn"] == 1 and first["sealedBlockId"] is None
        assert first["unresolvedBatchIds"] == [] and "next" not in first
        assert second["turn"] == 2 and second["sealedBlockId"]
        assert first["namespace"].startswith("sg:project:")
        found = await poll(client, "memory_search_events", "Alice Lisbon")
        ref = found["evidenceRefs"][0]
        assert ref.startswith("event:") and "Lisbon" in json.dumps(found["results"][0])
        assessed = await call(
            client,
            "memory_assess",
            batch_id=found["batchId"],
            verdict="sufficient",
            evidence_refs=[ref],
            fit="names the city Alice moved to",
            next_strategy="answer",  # no `missing`: a sufficient verdict has nothing missing
        )
        assert assessed["batch"]["assessment"]["verdict"] == "sufficient"
        used = await call(
            client, "memory_record_use", batch_id=found["batchId"], evidence_refs=[ref]
        )
        assert used["batch_status"] == "recorded"
        assert used["incremented"] == [ref.removeprefix("event:")]
        again = await refused(
            client, "memory_record_use", batch_id=found["batchId"], evidence_refs=[]
        )
        assert "recorded" in again


async def test_a_named_session_continues_across_servers_into_the_graph_and_topics(
    root: Path,
) -> None:
    async with connected(root) as first:
        opened = await record(first, LISBON[0], session="desk")
    async with connected(root) as second:
        continued = await record(second, LISBON[1], session="desk")
        graph = await poll(second, "memory_search_graph", "Alice")
        node = next(hit for hit in graph["results"] if hit["name"] == "Alice")
        expanded = await call(second, "memory_expand_graph_node", id=node["id"])
        topics = await call(second, "memory_list_topics")
    assert [(t["session"], t["turn"]) for t in opened + continued] == [("desk", 1), ("desk", 2)]
    assert continued[0]["sealedBlockId"]
    assert expanded["evidenceRefs"] == [f"graph-node:{node['id']}:expanded"]
    assert any(
        "Lisbon" in relation["relation"] for relation in expanded["results"]["currentRelations"]
    )
    assert "batchId" not in topics and topics["navigationOnly"] is True


async def test_a_ref_from_another_batch_is_refused_by_the_gate(root: Path) -> None:
    async with connected(root) as client:
        await record(client, *LISBON)
        found = await poll(client, "memory_search_events", "Alice Lisbon")
        blocks = await call(client, "memory_get_blocks", scope="session")
        assert blocks["batchId"] != found["batchId"]
        (ended,) = await record(client, ("Where does Alice live?", "In Lisbon."))
        assert ended["unresolvedBatchIds"] == [found["batchId"], blocks["batchId"]]
        assert "memory_record_use" in ended["next"]
        foreign = found["evidenceRefs"][0]
        error = await refused(
            client, "memory_record_use", batch_id=blocks["batchId"], evidence_refs=[foreign]
        )
        assert error.startswith(
            f"Error: memory_record_use failed: memory_record_use rejected for {blocks['batchId']}"
        )
        assert f"#0 {foreign!r}: not_in_batch" in error
        still_open = await call(
            client, "memory_record_use", batch_id=blocks["batchId"], evidence_refs=[]
        )
        assert still_open["batch_status"] == "recorded"


async def test_a_retried_turn_with_its_turn_id_is_recorded_once(root: Path) -> None:
    turn = {"user": "The kiln fires on Fridays.", "assistant": "Noted.", "turn_id": "t-1"}
    async with connected(root) as client:
        first = await call(client, "memory_record_turn", **turn)
        retried = await call(client, "memory_record_turn", **turn)
        other = await call(client, "memory_record_turn", **{**turn, "turn_id": "t-2"})
    assert (first["recorded"], retried["recorded"], other["recorded"]) == (True, False, True)
    assert retried["messageIds"] == first["messageIds"] and other["turn"] == first["turn"] + 1


async def test_remember_reinforces_a_duplicate(root: Path) -> None:
    async with connected(root) as client:
        fact = "The staging server is called kestrel."
        added = await call(client, "memory_remember", content=fact, category="fact")
        twice = await call(client, "memory_remember", content=fact, category="fact")
    assert (added["recorded"], added["action"]) == (True, "ADDED")
    assert twice["action"] == "REINFORCED"
    assert twice["reinforced_event_id"] == added["event_id"]


async def test_profile_changes_settle_with_the_recorded_user_messages(root: Path) -> None:
    """Asked for in its own turn → applied when the turn is recorded; proposed by the agent →
    the next recorded message agrees or refuses."""
    async with connected(root) as client:
        asked = await call(
            client, "memory_profile_update", field="user_preferred_name", value="Robin"
        )
        assert asked["status"] == "awaiting_consent" and "memory_record_turn" in asked["message"]
        await record(client, ("Please call me Robin from now on.", "Sure, Robin."))
        assert await profile_value(root, "user_preferred_name") == "Robin"
        await call(client, "memory_profile_update", field="current_city", value="Oslo")
        await record(
            client, ("I'm travelling this week.", "Shall I save Oslo as your current city?")
        )
        assert await profile_value(root, "current_city") == ""
        await record(client, ("yes", "Saved."))
        assert await profile_value(root, "current_city") == "Oslo"
        await call(client, "memory_profile_update", field="home_city", value="Bergen")
        await record(client, ("Where did I grow up?", "Shall I save Bergen as your home city?"))
        await record(client, ("no, never mind", "Fine, not saved."))
    assert await profile_value(root, "home_city") == ""


async def profile_value(root: Path, field: str) -> str:
    memory = await StrataGate.open(root / "home" / "memory.db")
    async with memory:
        profile = await memory.profile.get()
    return str(profile.values.get(field, ""))


async def test_unknown_tools_and_bad_arguments_are_mcp_errors_and_write_nothing(root: Path) -> None:
    async with connected(root) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("memory_delete_everything", {})
        assert unknown.value.code == types.INVALID_PARAMS
        assert "unknown tool 'memory_delete_everything'" in unknown.value.message
        wrong = await refused(client, "memory_search_events", query=3, limit=99)
        assert wrong == (
            "Error: invalid arguments for memory_search_events: query: Input should be a valid "
            "string; limit: Input should be less than or equal to 20"
        )
        extra = await refused(client, "memory_record_turn", user="hi", assistant="hello", mood="x")
        assert extra.startswith("Error: invalid arguments for memory_record_turn: mood:")
        empty = await refused(client, "memory_record_turn", user="   ", assistant="hello")
        assert "user is empty" in empty
        bad_session = await refused(
            client, "memory_record_turn", user="hi", assistant="x", session="../x"
        )
        assert "session" in bad_session
        unknown_event = await refused(client, "memory_expand_event", id="evt_missing")
        assert "evt_missing" in unknown_event
        negative = await refused(client, "memory_get_blocks", offset=-1)
        assert negative.startswith("Error: invalid arguments for memory_get_blocks: offset:")
        status = (await call(client, "memory_get_blocks", offset=3))["status"]
    assert (status["blockCount"], status["openTailCount"], status["offset"]) == (0, 0, 3)


async def test_spaces_keep_their_memory_apart(root: Path) -> None:
    async with connected(root, "--space", "alpha") as alpha:
        recorded = await record(alpha, *LISBON)
        await poll(alpha, "memory_search_events", "Alice Lisbon")
    async with connected(root, "--space", "beta") as beta:
        await record(beta, ("Bob flew to Paris for the conference.", "Paris, noted."))
        events = await call(beta, "memory_search_events", query="Alice Lisbon")
        raw = await call(beta, "memory_search_raw", query="Alice Lisbon")
        assert events["results"] == [] and raw["results"] == []
    async with connected(root, "--space", "alpha") as again:
        raw = await call(again, "memory_search_raw", query="Alice Lisbon")
        assert raw["results"] and "Lisbon" in raw["results"][0]["message"]["content"]
    assert recorded[0]["namespace"] == "alpha"


def test_stdout_carries_protocol_messages_only_and_eof_stops_the_server(root: Path) -> None:
    """A legacy session by hand: each request answered by one JSON-RPC line on stdout, and
    closing stdin ends the process with status 0 (worker stopped, database closed)."""
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "by-hand", "version": "1"},
    }
    turn = {"name": "memory_record_turn", "arguments": {"user": "hello there", "assistant": "hi"}}
    with subprocess.Popen(
        COMMAND,
        cwd=root / "project",
        env=server_env(root / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin and server.stdout and server.stderr

        def send(message: dict[str, Any]) -> None:
            assert server.stdin
            server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            server.stdin.flush()

        def reply() -> dict[str, Any]:
            assert server.stdout
            message: dict[str, Any] = json.loads(server.stdout.readline())
            return message

        try:
            send({"id": 1, "method": "initialize", "params": hello})
            initialized = reply()
            send({"method": "notifications/initialized"})
            send({"id": 2, "method": "tools/list"})
            listed = reply()
            send({"id": 3, "method": "tools/call", "params": turn})
            recorded = reply()
            server.stdin.close()
            code = server.wait(timeout=60)
            rest, errors = server.stdout.read(), server.stderr.read()
        finally:
            if server.poll() is None:
                server.kill()
    assert code == 0, errors
    assert (initialized["id"], listed["id"], recorded["id"], rest) == (1, 2, 3, "")
    assert initialized["result"]["serverInfo"]["name"] == "stratagate"
    assert len(listed["result"]["tools"]) == len(TOOLS) + 1
    assert recorded["result"]["structuredContent"]["recorded"] is True
    assert errors.startswith("StrataGate MCP server on stdio: memory space 'project'"), errors


@pytest.mark.parametrize(
    ("setting", "code", "said"),
    [
        ({"namespace_mode": "projet"}, 2, "stratagate: error: "),  # no safe default: refused
        ({"block_turn_size": "six"}, 0, "stratagate: warning: "),  # starts on the default
    ],
)
def test_a_bad_profile_setting_is_one_line_and_no_protocol_output(
    root: Path, setting: dict[str, str], code: int, said: str
) -> None:
    profile = {"plugins": ["stratagate-memory"], "settings": {"stratagate-memory": setting}}
    (root / "home" / "profiles" / "default.yml").write_text(yaml.safe_dump(profile), "utf-8")
    done = subprocess.run(
        COMMAND,
        input="",
        cwd=root / "project",
        env=server_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (code, "")
    [line] = [line for line in done.stderr.splitlines() if line.startswith("stratagate: ")]
    assert line.startswith(said) and "default.yml" in line and next(iter(setting)) in line


def test_other_commands_do_not_import_the_mcp_sdk(root: Path) -> None:
    """The SDK is slow to import; only ``stratagate mcp`` loads it."""
    probe = "import sys, stratagate_plugin.cli.main; print('mcp' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=server_env(root / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "False"
