"""Memory that tells the truth about its sources (issue 23): an event cites the words that
state it and only those, and an answer composed from memory is never the user's fact."""

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from stratagate_plugin.cli.main import main
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import ScriptedModel
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.records import MessageIn
from tests.test_offline_agent_honesty import ask
from tests.test_plugin_e2e import make_host, runtime_of


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    assert code == 0, out
    return out


def messages_by_text(db: Path) -> dict[str, dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM messages ORDER BY pk").fetchall()
    return {row["content"]: dict(row) for row in rows}


def sources_of(db: Path) -> dict[str, list[tuple[str, str, int]]]:
    """Every event (by title) → its sources as (role, content, composed_from_memory)."""
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT e.title, m.* FROM events e "
            "LEFT JOIN event_sources s ON s.event_id = e.id "
            "LEFT JOIN messages m ON m.id = s.message_id ORDER BY e.pk, s.position"
        ).fetchall()
    found: dict[str, list[tuple[str, str, int]]] = {}
    for row in rows:
        cited = found.setdefault(row["title"], [])
        if row["role"] is not None:
            echo = dict(row).get("composed_from_memory", 0)
            cited.append((row["role"], row["content"], echo))
    return found


# -- the licence plate: memory_remember cites its own turn -------------------------------


@pytest.mark.parametrize(
    ("earlier", "fact"),
    [
        (
            ["My mother Li lives in Nanjing.", "I hate cilantro."],
            "Remember: my licence plate is SUA12345.",
        ),
        (["我妈妈住在南京。", "我讨厌香菜。"], "记住：我的车牌号是沪A12345。"),
        (["The dentist is on Elm Street.", "Ravi plays cello."], "Remember: gate code 4471"),
    ],
)
def test_remember_cites_exactly_the_message_of_its_turn_in_show_and_json(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    earlier: list[str],
    fact: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for text in [*earlier, fact]:
        run(capsys, "chat", "--session", "a", "--message", text)
    [event] = json.loads(run(capsys, "events", "--json"))
    [said] = [m for m in messages_by_text(Path(tmp_path / "home" / "memory.db")).values()
              if m["content"] == fact]  # fmt: skip
    assert event["source_message_ids"] == [said["id"]]
    shown = json.loads(run(capsys, "show", event["id"], "--json"))
    assert [source["message"]["id"] for source in shown["sources"]] == [said["id"]]
    text = run(capsys, "show", event["id"])
    listed = text.split("\nsources\n")[1].split("\nlinks\n")[0]
    assert fact in listed and said["id"] in listed
    assert not any(line in listed for line in earlier) and "Noted" not in listed


async def test_remember_over_mcp_cites_the_recorded_turn_of_a_named_session(
    tmp_path: Path,
) -> None:
    """An MCP client remembers, then records its turn under a session name of its own: the
    event cites that turn's user message (its tools ran under the connection's session)."""
    from tests.test_mcp_server import call, connected

    profiles = tmp_path / "home" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "default.yml").write_text("plugins: [stratagate-memory]\n", encoding="utf-8")
    (tmp_path / "project").mkdir()
    async with connected(tmp_path) as client:
        await call(client, "memory_record_turn", user="Ravi plays the cello.", assistant="Ok.")
        remembered = await call(client, "memory_remember", content="Wifi password is owl-77")
        assert remembered["provenance"]["kind"] == "pending"
        await call(
            client,
            "memory_record_turn",
            user="Please remember the wifi password is owl-77.",
            assistant="Noted.",
            session="home-notes",
        )
        await call(client, "memory_record_turn", user="Thanks!", assistant="Any time.")
    db = tmp_path / "home" / "memory.db"
    assert sources_of(db)[remembered_title(db, remembered["event_id"])] == [
        ("user", "Please remember the wifi password is owl-77.", 0)
    ]


async def test_a_pending_citation_survives_a_restart_and_catch_up_resolves_it(
    tmp_path: Path,
) -> None:
    """The process ends after the tool ran and before its turn was recorded; the session
    file's turn is recorded at the next start (catch-up) and cites then."""
    db = tmp_path / "m.db"
    async with await StrataGate.open(db) as sg:
        await sg.blocks.append_turn("ns", "s", user="Ravi plays the cello.", assistant="Nice.")
        kept = await sg.remember.save("ns", "s", "Ravi's cello teacher is Ms Oduya")
    async with await StrataGate.open(db) as sg:
        assert (await sg.events.get(str(kept.event_id))).source_message_ids == []
        turn = await sg.blocks.append_turn(
            "ns", "s", user="Ravi's cello teacher is Ms Oduya.", assistant="Noted.",
            receipt_id="host:s:turn:2",
        )  # fmt: skip
        assert (await sg.events.get(str(kept.event_id))).source_message_ids == [turn.message_ids[0]]
        page = await sg.timeline.event(str(kept.event_id))  # the event page's source list
        assert [source.message.id for source in page.details.sources] == [turn.message_ids[0]]


def remembered_title(db: Path, event_id: str) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT title FROM events WHERE id = ?", (event_id,)).fetchone()[0])


# -- no echo: an answer composed from memory ---------------------------------------------

EN = (  # on main, the answer's second line became an active "You said: …" event
    [
        "The offsite is on 14 January 2027.",
        "Actually, the offsite is cancelled because the budget was cut.",
    ],
    "When is the offsite?",
    "I booked the hotel near the river yesterday.",
)
LISBON = (
    ["Our Lisbon trip is in May.", "Actually, change of plans: the Lisbon trip moves to June."],
    "When is the Lisbon trip?",
    "I booked the hotel near the river yesterday.",
)
ZH = (
    ["团队年会定在2027年1月14日。", "其实团队年会取消了，因为预算被砍了。"],
    "团队年会定在哪天？",
    "我昨天订好了河边的酒店。",
)


@pytest.mark.parametrize("scenario", [EN, LISBON, ZH], ids=["offsite", "lisbon", "zh"])
async def test_an_answer_from_memory_never_becomes_the_users_fact(
    tmp_path: Path, scenario: tuple[list[str], str, str]
) -> None:
    told, question, later = scenario
    db = tmp_path / "m.db"
    async with make_host(db, tmp_path, block_turn_size=2) as host:
        for text in told:
            await ask(host, "s1", text)
        [space] = await runtime_of(host).memory.spaces.names()
    before = {e.id: e.status for e in await derived(db, space)}
    async with make_host(db, tmp_path, block_turn_size=2) as host:
        answer = await ask(host, "s2", question)
        await ask(host, "s2", later)
    after = {e.id: e for e in await derived(db, space)}
    assert answer.startswith(("From what you told me before:", "根据你之前告诉我的："))
    for event_id, status in before.items():  # the user's own events keep their status
        assert after[event_id].status == status
    for title, cited in sources_of(db).items():
        assert cited, title
        assert all(role == "user" and not was_echo for role, _, was_echo in cited), title
    new = [e for e in after.values() if e.id not in before]
    assert [e.source_message_ids for e in new] == [[messages_by_text(db)[later]["id"]]]
    echo = messages_by_text(db)[answer]
    assert echo["composed_from_memory"] == 1 and json.loads(echo["adopted_refs_json"])


async def derived(db: Path, space: str) -> list[Any]:
    """Every tail sealed and derived (the host's worker may have stopped mid-way)."""
    async with await StrataGate.open(db) as memory:
        for thread in ("s1", "s2"):
            await memory.blocks.seal_tail(space, thread)
        await memory.derivation.process_pending()
        return await memory.events.cards(space)


async def test_the_statement_ranks_above_the_answer_that_repeats_it(tmp_path: Path) -> None:
    async with await StrataGate.open(tmp_path / "m.db", MemoryConfig(block_turn_size=1)) as sg:
        said = await sg.blocks.append_turn(
            "ns", "a", user="The kiln fires on Friday.", assistant="ok"
        )
        await sg.blocks.append_turn("ns", "b", user="filler about glaze colours", assistant="fine")

        def adopt(raw: sqlite3.Connection) -> None:  # a receipt adopting memory in b's turn
            raw.execute(
                "INSERT INTO batches(id, namespace, thread_id, sequence, tool, "
                "evidence_refs_json, status, turn, created_at, updated_at) VALUES "
                "('batch_x', 'ns', 'b', 1, 'memory_search_raw', '[]', 'recorded', 2, 'n', 'n')"
            )
            raw.execute(
                "INSERT INTO usage_receipts(namespace, receipt_id, batch_id, payload, "
                "event_ids_json, audit_json, created_at) "
                "VALUES ('ns', 'r1', 'batch_x', '', '[]', ?, 'n')",
                (json.dumps({"evidence_refs": [f"raw:x:{said.message_ids[0]}:0"]}),),
            )

        await sg.db.write(adopt)
        echo = await sg.blocks.append_turn(
            "ns", "b", user="When does the kiln fire?", assistant="You said: the kiln fires Friday."
        )
        hits = await sg.retrieval.search_raw("ns", "kiln fires Friday", 10)
        fused = await sg.retrieval.retrieve("ns", "kiln fires Friday", 10)
    order = [hit.message.id for hit in hits]
    assert echo.message_ids[1] in order  # demoted, not removed
    assert order.index(said.message_ids[0]) < order.index(echo.message_ids[1])
    ranked = [hit.message_id for hit in fused]
    assert ranked[0] == said.message_ids[0]


# -- the model path: the same source validation ------------------------------------------

SUMMARY = {"title": "t", "tags": [], "summary": "s", "keypoints": [], "should_extract": True}


async def test_the_model_path_drops_unrelated_and_echo_sources_and_counts_them(
    tmp_path: Path,
) -> None:
    model = ScriptedModel.of([SUMMARY])
    async with await StrataGate.open(
        tmp_path / "m.db", MemoryConfig(block_turn_size=9), model
    ) as sg:
        turns = [
            ("My sister Ana moved to Porto in March.", "Noted."),
            ("I hate cilantro.", "Got it."),
            ("Where does Ana live now?", "From memory: Ana moved to Porto in March."),
            ("Carol: we adopted a puppy named Biscuit.", "Lovely!"),
        ]
        ids = []
        for user, assistant in turns:
            receipt = await sg.blocks.append_turn("ns", "t", user=user, assistant=assistant)
            ids.append(receipt.message_ids)
        await sg.db.write(
            lambda raw: raw.execute(
                "UPDATE messages SET composed_from_memory = 1 WHERE id = ?", (ids[2][1],)
            )
        )
        await sg.blocks.seal_tail("ns", "t")
        cards = [
            card("Ana moved to Porto", [ids[0][0], ids[1][0], ids[1][1]]),  # cilantro: unrelated
            card("Ana lives in Porto since March", [ids[2][1]]),  # only the echo
            card("The user hates cilantro", [ids[0][1]]),  # only "Noted.": no shared term
            card("Carol adopted a puppy named Biscuit", [ids[3][0]], "other"),
            card("Agent will send the Porto guide", [ids[2][1], ids[3][1]], "plan"),
        ]
        model.push({"should_extract": True, "events": cards})
        report = await sg.derivation.process_pending()
        events = {e.title: e.source_message_ids for e in await sg.events.cards("ns")}
        [job] = [j for j in await sg.derivation.list_jobs("ns") if j.kind == "event_extraction"]
    assert events == {
        "Ana moved to Porto": [ids[0][0]],
        "Carol adopted a puppy named Biscuit": [ids[3][0]],
    }
    dropped = report.dropped
    assert (dropped.unrelated, dropped.echoes, dropped.cards) == (4, 2, 3)
    assert job.detail is not None and "validation dropped 4 unrelated sources" in job.detail


async def test_a_model_card_citing_the_whole_block_keeps_only_the_message_stating_it(
    tmp_path: Path,
) -> None:
    model = ScriptedModel.of([SUMMARY])
    async with await StrataGate.open(
        tmp_path / "m.db", MemoryConfig(block_turn_size=2), model
    ) as sg:
        one = await sg.blocks.append_turn(
            "ns", "t", user="Priya started learning Go.", assistant="Nice."
        )
        two = await sg.blocks.append_turn("ns", "t", user="我的猫叫年糕。", assistant="好可爱！")
        everything = [*one.message_ids, *two.message_ids]
        model.push(
            {
                "should_extract": True,
                "events": [card("Priya is learning Go", everything), card("猫叫年糕", everything)],
            }
        )
        await sg.derivation.process_pending()
        events = {e.title: e.source_message_ids for e in await sg.events.cards("ns")}
    assert events == {
        "Priya is learning Go": [one.message_ids[0]],
        "猫叫年糕": [two.message_ids[0]],
    }


def card(title: str, sources: list[str], event_type: str = "other") -> dict[str, Any]:
    return {
        "title": title,
        "summary": f"{title}.",
        "source_message_ids": sources,
        "scope": "user",
        "temporal": {"event_type": event_type},
    }


async def test_a_named_speaker_recorded_as_assistant_is_a_person(tmp_path: Path) -> None:
    """LoCoMo's second speaker is recorded as ``assistant`` with a ``Name:`` label; what they
    say is a person's statement, in English and Chinese."""
    model = ScriptedModel.of([SUMMARY])
    async with await StrataGate.open(
        tmp_path / "m.db", MemoryConfig(block_turn_size=9), model
    ) as sg:
        messages = [
            MessageIn(role="user", content="Caroline: How was your weekend?"),
            MessageIn(role="assistant", content="Melanie: I ran a charity race for mental health."),
            MessageIn(role="assistant", content="梅兰妮: 我上周去露营了。"),
        ]
        receipt = await sg.blocks.record_turn("ns", "t", messages)
        await sg.blocks.seal_tail("ns", "t")
        ids = receipt.message_ids
        model.push(
            {
                "should_extract": True,
                "events": [
                    card("Melanie ran a charity race", [ids[1]]),
                    card("梅兰妮上周去露营", [ids[2]]),
                ],
            }
        )
        await sg.derivation.process_pending()
        events = {e.title: e.source_message_ids for e in await sg.events.cards("ns")}
    assert events == {"Melanie ran a charity race": [ids[1]], "梅兰妮上周去露营": [ids[2]]}


@pytest.mark.parametrize(
    ("card_text", "message", "states"),
    [
        ("Ana moved to Porto", "My sister Ana moved to Porto in March.", True),
        ("The user hates cilantro", "I can't stand cilantro at all", True),
        ("The user hates cilantro", "Noted.", False),
        ("用户下个月搬到上海", "我下个月搬去上海。", True),
        ("用户养猫", "我有一只猫", False),  # one shared character says too little
        ("猫叫年糕", "Priya started learning Go.", False),
        ("Melanie ran a charity race", "Melanie: I went camping.", False),  # the label
    ],
)
def test_a_source_states_the_card_when_they_share_a_content_term(
    card_text: str, message: str, states: bool
) -> None:
    from stratagate_plugin.core.events.source_check import content_terms, shares_content
    from stratagate_plugin.core.llm.offline.text import split_speaker

    body = split_speaker(message)[1]
    assert shares_content(content_terms(card_text), content_terms(body)) is states
