"""Topics that finish (issue 26): the historical budget bounds MODEL cost only.

With the embedded offline grouper (or a model marked ``free``) one ``stratagate process``
runs every topic batch, historical ones included: after an import of 40 memories nothing
is left pending, and ``process`` says the topic batches it ran. With a paid model the
budget still holds historical batches back, and ``stratagate topics`` and ``process``
say how many wait, why (2 per 10 minutes) and when the next runs."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from imports import candidate, document
from test_cli import run
from topic_data import TopicScript, add_events, at, new_space

from stratagate_plugin.cli import topics_command
from stratagate_plugin.core.clock import parse_iso
from stratagate_plugin.core.config import MemoryConfig
from stratagate_plugin.core.llm.http import HttpModel
from stratagate_plugin.core.llm.select import model_from_settings
from stratagate_plugin.core.memory import StrataGate
from tests.test_web_blocks import runtime_of
from tests.webapp import memory_of, web_app, worker_on_request

NS = "ns"
SUBJECTS = ["pottery", "marathon", "garden", "violin", "chess", "sourdough", "kayak", "Lisbon"]


def memories(count: int) -> str:
    """``count`` saved memories on a handful of subjects, as an export lists them."""
    return document(
        *[
            candidate(
                f"Note {n} on {SUBJECTS[n % len(SUBJECTS)]}",
                f"The user keeps practising {SUBJECTS[n % len(SUBJECTS)]} (entry {n}).",
            )
            for n in range(count)
        ]
    )


def test_one_process_finishes_the_topics_of_an_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file = str(tmp_path / "m.db"), tmp_path / "saved.json"
    file.write_text(memories(40), encoding="utf-8")
    assert run(capsys, "import", str(file), "--commit", "--db", db, "--space", NS)[0] == 0
    code, out, _ = run(capsys, "process", "--db", db)
    assert code == 0
    ran = re.search(r"topics: ran (\d+) batches: (\d+) succeeded", out)
    assert ran is not None and int(ran[1]) >= 4 and ran[1] == ran[2], out  # 40 events / 12
    assert "waiting" not in out
    code, out, _ = run(capsys, "topics", "--db", db, "--space", NS, "--json")
    book = json.loads(out)
    assert book["pending"] == [] and book["fallbackEntries"] == 0 and book["waiting"] is None
    assert sum(len(c["eventIds"]) for c in book["chapters"]) == 40
    code, out, _ = run(capsys, "process", "--db", db)  # nothing left for a second run
    assert "topics: ran" not in out


async def old_space(path: Path, count: int) -> None:
    """A space whose ``count`` events predate the topic catalog: historical batches."""
    async with await StrataGate.open(path) as memory:
        await new_space(memory, NS)
        await add_events(memory, NS, count)
        await memory.db.write(lambda raw: raw.execute("DELETE FROM topic_state"))


async def test_a_model_marked_free_is_not_held_back_by_the_budget(tmp_path: Path) -> None:
    await old_space(tmp_path / "m.db", 40)
    model = TopicScript()
    model.free = True  # type: ignore[attr-defined]
    config = MemoryConfig(topic_projector="model")
    async with await StrataGate.open(tmp_path / "m.db", config, model) as memory:
        memory.topics.clock = lambda: at(0)  # type: ignore[method-assign]
        report = await memory.topics.process()
        assert (report.succeeded, report.waiting) == (4, None)
        book = await memory.topics.book(NS)
        assert book["pending"] == [] and book["waiting"] is None


def test_free_is_an_endpoint_setting() -> None:
    environ = {"STRATAGATE_BASE_URL": "http://127.0.0.1:9/v1", "STRATAGATE_MODEL": "local"}
    paid = model_from_settings(None, environ)
    free = model_from_settings(None, {**environ, "STRATAGATE_FREE": "true"})
    profile = {"base_url": "http://127.0.0.1:9/v1", "model": "local", "free": True}
    from_profile = model_from_settings(profile, {})
    assert isinstance(paid, HttpModel) and isinstance(free, HttpModel)
    assert isinstance(from_profile, HttpModel) and from_profile.config.free is True
    assert paid.config.free is False and free.config.free is True


async def test_a_paid_model_says_what_waits_why_and_when(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    await old_space(path, 40)
    config = MemoryConfig(topic_projector="model")
    async with await StrataGate.open(path, config, TopicScript()) as memory:
        memory.topics.clock = lambda: at(0)  # type: ignore[method-assign]
        report = await memory.topics.process()
        assert report.succeeded == 2  # the budget: 2 historical batches per 10 minutes
        assert report.waiting is not None and report.waiting["batches"] == 2
        assert parse_iso(report.waiting["nextRunAt"]) == at(10)
        book = await memory.topics.book(NS)
    assert book["waiting"] == {
        "batches": 2,
        "reason": "historical budget",
        "calls": 2,
        "windowMinutes": 10,
        "nextRunAt": report.waiting["nextRunAt"],
    }

    async def paid_memory(args: Any) -> StrataGate:
        memory = await StrataGate.open(path, config, TopicScript())
        memory.topics.clock = lambda: at(1)  # type: ignore[method-assign]
        return memory

    monkeypatch.setattr(topics_command, "open_memory", paid_memory)
    code, out, _ = await _topics(capsys, path)
    assert code == 0
    [line] = [line for line in out.splitlines() if "waiting" in line]
    assert line.startswith("2 historical topic batch(es) waiting")
    assert "2 per 10 minutes" in line and report.waiting["nextRunAt"] in line


async def _topics(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    args = topics_command.argparse.Namespace(db=str(path), space=NS, json=False, retry=False)
    code = await topics_command.show_topics(args)
    out, err = capsys.readouterr()
    return code, out, err


async def test_the_status_and_topics_pages_say_what_the_budget_holds_back(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space = memory_of(host), runtime_of(host).default_space()
        await worker_on_request(host)  # no pass of the worker's may run the batches
        memory.config = memory.config.model_copy(update={"topic_projector": "model"})
        memory.model = TopicScript()  # a paid model: the budget applies
        await new_space(memory, space)
        await add_events(memory, space, 40)
        await memory.db.write(lambda raw: raw.execute("DELETE FROM topic_state"))
        await memory.topics.bootstrap()  # the 40 events frozen as 4 historical batches
        memory.topics.clock = lambda: at(0)  # type: ignore[method-assign]
        assert (await memory.topics.process()).succeeded == 2
        waiting = await memory.topics.budget_wait(space)
        assert waiting is not None
        said = (
            "2 historical topic batches wait for the topic model&#39;s budget (2 per 10 "
            "minutes); the next runs "
        )
        for url in ("/memory/", "/memory/status/panel", "/memory/topics"):
            page = (await client.get(url, params={"space": space})).text
            assert said in page, url  # the time in the reader's terms, or as ISO
            assert waiting["nextRunAt"] in page, url  # ... its ISO value at least on hover
        memory.topics.clock = lambda: at(10)  # type: ignore[method-assign]
        assert (await memory.topics.process()).succeeded == 2
        page = (await client.get("/memory/status/panel", params={"space": space})).text
        assert "historical topic batches" not in page
