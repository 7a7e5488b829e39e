"""Memory files in the wild (issue 27): a large Letta agent imported whole, and the
template text agent frameworks ship in their blocks proposed IGNORE with its reason."""

import json
from pathlib import Path

from imports import NS

from stratagate_plugin.core.importer import template_text
from stratagate_plugin.core.memory import StrataGate

SAMPLES = Path(__file__).parent / "samples" / "import"


def big_agent(blocks: int, lines: int) -> str:
    """A Letta agent file of ``blocks`` human-like blocks holding ``lines`` facts in all."""
    per = [lines // blocks + (1 if b < lines % blocks else 0) for b in range(blocks)]
    made = [
        {
            "id": f"block-{b}",
            "label": f"notes_{b}",
            "limit": 50000,
            "value": "\n".join(
                f"Fact {b}-{n}: owns notebook number {b * 100 + n}" for n in range(k)
            ),
        }
        for b, k in enumerate(per)
    ]
    agent = {"id": "agent-0", "name": "big", "block_ids": [b["id"] for b in made]}
    return json.dumps({"agents": [agent], "blocks": made})


async def test_a_letta_agent_past_2000_lines_is_imported_whole_with_progress(
    memory: StrataGate,
) -> None:
    job = await memory.imports.preview(NS, big_agent(56, 2107))
    assert (job.format, job.total, job.status) == ("letta", 2107, "processing")
    seen: list[tuple[int, int]] = []
    job = await memory.imports.advance(
        job.id, max_items=700, progress=lambda d, t: seen.append((d, t))
    )
    assert job.processed == 700 and job.status == "processing"
    job = await memory.imports.advance(job.id, progress=lambda d, t: seen.append((d, t)))
    assert job.status == "ready" and job.processed == 2107
    assert seen[0] == (1, 2107) and seen[-1] == (2107, 2107) and len(seen) == 2107
    batch = await memory.imports.commit(job.id)
    assert batch.imported_count == 2107


async def test_template_text_in_a_letta_agent_is_proposed_ignore_with_its_reason(
    memory: StrataGate,
) -> None:
    text = (SAMPLES / "letta-agent-template.af").read_text("utf-8")
    job = await memory.imports.advance((await memory.imports.preview(NS, text)).id)
    proposed = {item.candidate.summary: (item.action, item.reason) for item in job.items}
    ignored = {summary for summary, (action, _) in proposed.items() if action == "IGNORE"}
    assert ignored == {
        "Hometown: (populated through interaction)",
        "Things they like: [not yet learned]",
        "Haven't learned their preferences yet.",
        "Favourite cuisine: [not yet learned]",
        "I apply these without announcing them.",
        "Update this block as you learn new preferences.",
        "目标：（待补充）",
        "尚未了解用户的长期目标。",
    }
    assert proposed["Things they like: [not yet learned]"][1] == template_text.PLACEHOLDER
    assert proposed["Haven't learned their preferences yet."][1] == template_text.NOT_YET
    assert proposed["I apply these without announcing them."][1] == template_text.TO_AGENT
    kept = {summary for summary, (action, _) in proposed.items() if action == "ADD"}
    assert kept == {
        "Name: Lena Okafor",
        "She plays tennis on Tuesdays.",
        "Prefers replies in British English.",
        "Wants to run a half marathon in spring.",
    }
    batch = await memory.imports.commit(job.id)
    assert batch.imported_count == 4


def test_first_person_is_the_user_in_a_pasted_list() -> None:
    assert template_text.template_reason("I use Vim for everything", "lines") is None
    assert template_text.template_reason("I use these rules silently", "letta") is not None
    for memory_text in ("Hasn't learned to swim yet", "Lives in (East) Berlin", "Name: Ana"):
        assert template_text.template_reason(memory_text, "letta") is None
