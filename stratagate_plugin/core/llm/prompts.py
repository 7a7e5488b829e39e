"""The structured tasks' English instructions, shipped as package data (``prompts/*.md``)."""

from functools import cache
from importlib import resources

from .tasks import (
    EXTRACT_EVENT_CARDS,
    PROJECT_GRAPH,
    PROJECT_MEMORY_TOPICS,
    SUMMARIZE_BLOCK,
    TEMPORAL_FIELDS_DOC,
)

PROMPT_NAMES = frozenset(
    {SUMMARIZE_BLOCK, EXTRACT_EVENT_CARDS, PROJECT_GRAPH, PROJECT_MEMORY_TOPICS}
)
_TEMPORAL_MARKER = "{{TEMPORAL_FIELDS}}"


@cache
def load_prompt(task_name: str) -> str:
    """The instructions for ``task_name``; the temporal field list comes from ``tasks``."""
    if task_name not in PROMPT_NAMES:
        raise KeyError(f"no prompt for task {task_name!r}")
    text = resources.files(__package__).joinpath("prompts", f"{task_name}.md").read_text("utf-8")
    return text.replace(_TEMPORAL_MARKER, _temporal_fields()).strip()


def _temporal_fields() -> str:
    return "\n".join(f"- `{key}`: {doc}" for key, doc in TEMPORAL_FIELDS_DOC.items())
