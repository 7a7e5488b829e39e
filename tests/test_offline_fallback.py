"""Memory still fills when the model fails (issue 31): a task the model fails falls back to
the offline model, marked on the block, its cards and the job; ``rederive_offline`` runs
those blocks on the model again, keeping what a person acted on."""

import sqlite3
from pathlib import Path
from typing import Any

from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.base import (
    ModelAuthError,
    ModelOutputError,
    ModelServerError,
    ScriptedModel,
)
from stratagate_plugin.core.llm.tasks import (
    EXTRACT_EVENT_CARDS,
    PROJECT_GRAPH,
    PROJECT_MEMORY_TOPICS,
    SUMMARIZE_BLOCK,
)
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.purge.words import Needles

STATEMENTS = (
    "My sister Ana lives in Lisbon.",
    "I work at Fernwood Labs as a data engineer.",
    "Our dog Biscuit is four years old.",
    "I am allergic to peanuts.",
    "We moved the team offsite to March 14.",
    "My favourite editor is Helix.",
)
GARBAGE = "the reply contained no tool call and no JSON object"


class AlwaysFailing(ScriptedModel):
    """A model that fails every task the same way (a weak or misconfigured endpoint)."""

    def __init__(self, error: Exception, name: str = "smollm2") -> None:
        super().__init__(name=name)
        self.error = error

    async def complete(self, task: Any) -> Any:
        self.requests.append(task)
        raise self.error


class Echoing(ScriptedModel):
    """A good model: a summary of the block, one card per user message it was shown."""

    def __init__(self) -> None:
        super().__init__(name="good-model")

    async def complete(self, task: Any) -> Any:
        self.requests.append(task)
        if task.name == SUMMARIZE_BLOCK:
            return task.output_type.model_validate(
                {"title": "Model title", "tags": ["model"], "summary": "By the model.",
                 "keypoints": ["model point"], "should_extract": True}
            )  # fmt: skip
        assert task.name == EXTRACT_EVENT_CARDS
        users = [m for m in task.payload["target"]["messages"] if m["role"] == "user"]
        events = [
            {"title": f"Model card {i}", "summary": m["content"], "scope": "user",
             "source_message_ids": [m["id"]], "quotes": [m["content"]]}
            for i, m in enumerate(users)
        ]  # fmt: skip
        return task.output_type.model_validate({"should_extract": True, "events": events})


async def fill(db_path: Path, model: ScriptedModel) -> StrataGate:
    """Six statements in three blocks of two turns, then a derivation pass."""
    memory = await StrataGate.open(db_path, MemoryConfig(block_turn_size=2), model=model)
    for i, text in enumerate(STATEMENTS):
        await memory.blocks.append_turn(
            "ns", "t", user=text, assistant="Noted.", receipt_id=f"r{i}"
        )
    return memory


async def derived_offline(db_path: Path) -> StrataGate:
    """The six statements derived while the model answers garbage."""
    memory = await fill(db_path, AlwaysFailing(ModelOutputError(GARBAGE)))
    await memory.derivation.process_pending()
    return memory


def marks(plain: sqlite3.Connection, table: str) -> list[tuple[Any, ...]]:
    """Each row's derivation mark, in the order the rows were made (on both backends)."""
    order = {"blocks": "sequence", "events": "pk"}[table]
    rows = plain.execute(f"SELECT derived_by, derive_error FROM {table} ORDER BY {order}")
    return [tuple(row) for row in rows]


async def test_a_model_that_fails_every_task_still_fills_memory_marked_offline(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    model = AlwaysFailing(ModelOutputError(f"model 'smollm2' returned invalid output: {GARBAGE}"))
    memory = await fill(db_path, model)
    report = await memory.derivation.process_pending()
    assert report.failed == 0 and len(report.fallbacks) == 6  # 3 summaries, 3 extractions
    statuses = plain.execute("SELECT processing_status FROM blocks").fetchall()
    assert [s for (s,) in statuses] == ["ready"] * 3  # no block left pending
    events = await memory.events.cards("ns")
    assert len(events) >= 4, [e.title for e in events]  # the offline model's cards
    assert {e.derived_by for e in events} == {"offline-fallback"}
    assert all(GARBAGE in (e.derive_error or "") for e in events)
    blocks = marks(plain, "blocks")
    assert {by for by, _ in blocks} == {"offline-fallback"}
    assert all(error.startswith("ModelOutputError: ") and GARBAGE in error for _, error in blocks)
    jobs = plain.execute(
        "SELECT status, derived_by, last_error FROM jobs WHERE kind IN "
        "('block_summary', 'event_extraction')"
    ).fetchall()
    assert {(s, by) for s, by, _ in jobs} == {("succeeded", "offline-fallback")}
    assert all(GARBAGE in error for *_, error in jobs)
    offline = await memory.derivation.offline_derived("ns")
    assert len(offline.blocks) == 3 and offline.blocks[0].derive_error
    await memory.close()


async def test_the_kept_error_is_one_line_without_secrets(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    error = ModelServerError("server said:\n  bad key sk-abcdefghijklmnopqrstuvwxyz012345\n" * 40)
    memory = await fill(db_path, AlwaysFailing(error))
    await memory.derivation.process_pending()
    for _, kept in marks(plain, "blocks") + marks(plain, "events"):
        assert "\n" not in kept and len(kept) <= 300
        assert "sk-abcdefghijklmnop" not in kept and kept.startswith("ModelServerError: ")
    await memory.close()


async def test_a_model_that_answers_is_named_and_offline_is_offline(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await fill(db_path, Echoing())
    await memory.derivation.process_pending()
    assert set(marks(plain, "blocks")) == {("good-model", None)}
    assert set(marks(plain, "events")) == {("good-model", None)}
    await memory.close()
    offline = await StrataGate.open(db_path.with_name("o.db"), MemoryConfig(block_turn_size=2))
    for i, text in enumerate(STATEMENTS[:2]):
        await offline.blocks.append_turn(
            "ns", "t", user=text, assistant="Noted.", receipt_id=f"r{i}"
        )
    await offline.derivation.process_pending()
    [block] = [view.block for view in await offline.blocks.views()]
    assert (block.derived_by, block.derive_error) == ("offline", None)
    assert (await offline.derivation.offline_derived()).blocks == []
    await offline.close()


async def test_a_setup_error_also_fills_memory_and_is_reported_as_such(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await fill(db_path, AlwaysFailing(ModelAuthError("401: the API key was rejected")))
    report = await memory.derivation.process_pending()
    assert report.failed == 0 and report.fallbacks
    assert all("ModelAuthError: 401" in line for line in report.fallbacks)
    assert (
        plain.execute("SELECT count(*) FROM blocks WHERE processing_status != 'ready'").fetchone()[
            0
        ]
        == 0
    )
    await memory.close()


async def test_without_the_fallback_a_failing_model_leaves_the_block_pending(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    config = MemoryConfig(block_turn_size=2, offline_fallback=False)
    model = AlwaysFailing(ModelOutputError(GARBAGE))
    memory = await StrataGate.open(db_path, config, model=model)
    await memory.blocks.append_turn("ns", "t", user=STATEMENTS[0], assistant="ok", receipt_id="a")
    await memory.blocks.append_turn("ns", "t", user=STATEMENTS[1], assistant="ok", receipt_id="b")
    report = await memory.derivation.process_pending()
    assert report.failed == 1 and not report.fallbacks
    assert plain.execute("SELECT processing_status FROM blocks").fetchone()[0] == "pending"
    await memory.close()


async def test_rederive_replaces_the_offline_result_with_the_models(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await derived_offline(db_path)
    offline_ids = {e.id for e in await memory.events.cards("ns")}
    memory.model = Echoing()  # the endpoint fixed
    report = await memory.derivation.rederive_offline()
    assert (report.asked, len(report.replaced), report.failed) == (3, 3, [])
    events = await memory.events.cards("ns")
    assert {e.derived_by for e in events} == {"good-model"} and len(events) == 6
    assert not offline_ids & {e.id for e in events}
    assert report.removed == len(offline_ids) and report.added == 6
    assert set(marks(plain, "blocks")) == {("good-model", None)}
    titles = [v.block.l0_title for v in await memory.blocks.views()]
    assert titles == ["Model title"] * 3
    jobs = plain.execute(
        "SELECT DISTINCT derived_by, last_error FROM jobs WHERE kind IN "
        "('block_summary', 'event_extraction')"
    ).fetchall()
    assert [tuple(row) for row in jobs] == [("good-model", None)]
    assert (await memory.derivation.offline_derived()).blocks == []
    await memory.close()


async def test_rederive_keeps_a_card_a_person_acted_on_and_says_so(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await derived_offline(db_path)
    pinned, forgotten, *_ = await memory.events.cards("ns")
    await memory.gate.pin_event(pinned.id)
    await memory.gate.forget_event(forgotten.id)
    memory.model = Echoing()
    report = await memory.derivation.rederive_offline()
    kept = dict(line.split(": ", 1) for line in report.kept)
    assert kept[pinned.id] == "pinned" and forgotten.id in kept
    still = {e.id: e for e in await memory.events.cards("ns", include_hidden=True)}
    assert still[pinned.id].pinned and still[pinned.id].derived_by == "offline-fallback"
    assert still[forgotten.id].status == "forgotten"
    await memory.close()


async def test_a_rederive_the_model_fails_again_keeps_the_offline_result(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    memory = await derived_offline(db_path)
    before = {e.id for e in await memory.events.cards("ns")}
    memory.model = AlwaysFailing(ModelServerError("503 from the server"))
    report = await memory.derivation.rederive_offline()
    assert report.replaced == [] and len(report.failed) == 3
    assert {e.id for e in await memory.events.cards("ns")} == before
    assert {error for _, error in marks(plain, "blocks")} == {
        "ModelServerError: 503 from the server"
    }
    assert len((await memory.derivation.offline_derived()).blocks) == 3
    await memory.close()


class GoodButNoProjections(Echoing):
    """Answers blocks well but fails the graph and topic projections."""

    async def complete(self, task: Any) -> Any:
        if task.name in (PROJECT_GRAPH, PROJECT_MEMORY_TOPICS):
            self.requests.append(task)
            raise ModelOutputError(f"{task.name}: {GARBAGE}")
        return await super().complete(task)


async def test_graph_and_topic_batches_the_model_fails_are_projected_offline(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    config = MemoryConfig(block_turn_size=2, graph_projector="model", topic_projector="model")
    model = GoodButNoProjections()
    memory = await StrataGate.open(db_path, config, model=model)
    for i, text in enumerate(STATEMENTS):
        await memory.blocks.append_turn(
            "ns", "t", user=text, assistant="Noted.", receipt_id=f"r{i}"
        )
    report = await memory.derivation.process_pending()
    asked = {task.name for task in model.requests}
    assert {PROJECT_GRAPH, PROJECT_MEMORY_TOPICS} <= asked
    assert report.graph_failed == 0 and report.topics.failed == 0
    rows = plain.execute(
        "SELECT kind, status, derived_by, last_error FROM jobs "
        "WHERE kind IN ('graph_projection', 'topic_projection')"
    ).fetchall()
    assert {kind for kind, *_ in rows} == {"graph_projection", "topic_projection"}
    assert all(by == "offline-fallback" and GARBAGE in error for _, _, by, error in rows)
    assert {status for _, status, *_ in rows} <= {"succeeded", "skipped"}
    assert plain.execute("SELECT count(*) FROM graph_nodes").fetchone()[0] > 0
    assert plain.execute("SELECT count(*) FROM topics").fetchone()[0] > 0
    assert {e.derived_by for e in await memory.events.cards("ns")} == {"good-model"}
    assert len((await memory.derivation.offline_derived("ns")).jobs) == len(rows)
    await memory.close()


async def test_a_purge_erases_the_words_from_the_kept_model_errors(
    db_path: Path, plain: sqlite3.Connection
) -> None:
    """A model's error may echo what it was given; a purge reaches it too."""
    echoed = ModelOutputError("invalid output: 'Biscuit the wombat' is not an object")
    memory = await fill(db_path, AlwaysFailing(echoed))
    await memory.derivation.process_pending()
    assert any("wombat" in (error or "") for _, error in marks(plain, "events"))
    await memory.purge.words(Needles(["wombat"]))
    left = await memory.purge.check(Needles(["wombat"]))
    assert not {cell for cell in left if "derive_error" in cell or "last_error" in cell}, left
    await memory.close()
