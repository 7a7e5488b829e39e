"""What a LoCoMo export looks like, checked before anything reads it.

The bench and ``stratagate ingest`` index into the file freely (``sample["qa"]``,
``item["speaker"]``); a file of another shape would stop with a bare ``KeyError``. One check
up front turns that into a line saying which part is wrong and what was expected.
"""

import re
from typing import Any

from ..core.errors import InvalidInput

SESSION_KEY = re.compile(r"session_[0-9]+")
EXPECTED = (
    "expected a JSON list of samples {sample_id, conversation: {speaker_a, speaker_b, "
    "session_1: [{speaker, dia_id, text}, …], session_1_date_time, …}, "
    "qa: [{question, evidence?, category?}, …]}"
)
_LINE_FIELDS = ("speaker", "dia_id", "text")


def check_samples(value: Any, questions: bool = True) -> list[dict[str, Any]]:
    """``value`` when it is a LoCoMo export; ``questions=False`` (ingest) needs no ``qa``."""
    problem = _file_problem(value, questions)
    if problem:
        raise InvalidInput(f"not a LoCoMo export: {problem}; {EXPECTED}")
    return list(value)


def _file_problem(value: Any, questions: bool) -> str | None:
    if not isinstance(value, list) or not value:
        return "the top level is not a non-empty list"
    for number, sample in enumerate(value):
        problem = _sample_problem(sample, questions)
        if problem:
            return f"sample {number}: {problem}"
    return None


def _sample_problem(sample: Any, questions: bool) -> str | None:
    if not isinstance(sample, dict):
        return "not an object"
    wants_id = questions or "sample_id" in sample
    if wants_id and not isinstance(sample.get("sample_id"), str | int):
        return "sample_id is missing or not a string"
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        return "conversation is missing or not an object"
    if not isinstance(conversation.get("speaker_a"), str):
        return "conversation.speaker_a is missing or not a string"
    problem = next(filter(None, map(_session_problem, conversation.items())), None)
    if problem is None and questions:
        problem = _questions_problem(sample.get("qa"))
    return problem


def _session_problem(item: tuple[str, Any]) -> str | None:
    key, lines = item
    if not SESSION_KEY.fullmatch(key):
        return None
    if not isinstance(lines, list):
        return f"conversation.{key} is not a list"
    for index, line in enumerate(lines):
        if not isinstance(line, dict) or not all(
            isinstance(line.get(f), str) for f in _LINE_FIELDS
        ):
            return f"conversation.{key}[{index}] needs string speaker, dia_id and text"
    return None


def _questions_problem(qa: Any) -> str | None:
    if not isinstance(qa, list):
        return "qa is missing or not a list"
    for index, question in enumerate(qa):
        if not isinstance(question, dict) or not isinstance(question.get("question"), str):
            return f"qa[{index}] needs a string question"
        if not isinstance(question.get("evidence") or [], list):
            return f"qa[{index}].evidence is not a list"
        category = question.get("category", 0)
        if not isinstance(category, int) or isinstance(category, bool):
            return f"qa[{index}].category is not an integer"
    return None
