"""The finish step (behaviour spec §7.4): merging stop decisions and checking recovered answers.

When several plugins answer ``turn_stopping``, the strictest wins: fail, then steer, then
recover, then allow; answers of the same kind are joined with blank lines.
"""

from collections.abc import Sequence

from .chat import ChatMessage
from .folding import message_text
from .types import StopDecision, StopKind

RECOVERY_ATTEMPTS = 3
_PRECEDENCE: tuple[StopKind, ...] = ("fail", "steer", "recover")


class TurnFailed(Exception):
    """The turn ends with an error; ``str`` is the reason shown to the user."""


def merge_decisions(decisions: Sequence[object]) -> StopDecision:
    """One decision from all plugins' answers (anything not a ``StopDecision`` is ignored)."""
    valid = [d for d in decisions if isinstance(d, StopDecision)]
    for kind in _PRECEDENCE:
        texts = [d.text.strip() for d in valid if d.kind == kind]
        if texts:
            return StopDecision(kind, "\n\n".join(t for t in texts if t))
    return StopDecision.allow()


def recovery_problem(reply: ChatMessage) -> str | None:
    """Why a recovery answer is not a complete final answer, or None if it is."""
    if reply.tool_calls:
        return "the answer asked for tools, which are unavailable in this step"
    if reply.finish_reason not in (None, "stop"):
        return f"the answer was cut off (finish reason {reply.finish_reason!r})"
    if not message_text(reply).strip():
        return "the answer was empty"
    return None


def recovery_request(instructions: str, problem: str | None) -> str:
    """The instructions for one attempt; a retry also says why the last one was refused."""
    if problem is None:
        return instructions
    return f"{instructions}\n\nYour previous attempt was not accepted: {problem}."


def recovery_failure(problem: str) -> TurnFailed:
    return TurnFailed(f"final answer recovery failed after {RECOVERY_ATTEMPTS} attempts: {problem}")
