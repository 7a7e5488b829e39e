"""The one line a person is shown after a memory action, the same in the CLI and the web.

Purely from the receipt and the event as it now is (``ActionResult``)."""

from .actions import ActionResult

DONE = {"forget": "forgot", "restore": "restored", "pin": "pinned", "unpin": "unpinned"}
RESOLVED = {"keep_both": "kept both", "supersedes": "{event} now supersedes {other}"}


def receipt_line(result: ActionResult) -> str:
    action, card = result.action, result.card
    detail = action.detail
    if action.kind == "purge":
        others = len(detail["also_forgotten"])
        also = f"; also forgot {count(others, 'event')} citing them" if others else ""
        return (
            f"forgot {card.id} and purged {count(len(detail['messages']), 'source message')}"
            f"{also} (receipt {action.id}); the summaries of "
            f"{count(len(detail['blocks']), 'block')} are derived again by 'stratagate process'"
        )
    if action.kind == "correct":
        return (
            f"corrected {action.target_id}: {detail['new_event_id']} supersedes it, "
            f"the old wording kept as history (receipt {action.id})"
        )
    if action.kind == "resolve":
        how = RESOLVED[detail["resolution"]].format(
            event=action.target_id, other=detail["other_id"]
        )
        return (
            f"resolved the conflict of {action.target_id} and {detail['other_id']}: {how} "
            f"(receipt {action.id})"
        )
    state = card.status + (", pinned" if card.pinned else "")
    undo = f"; 'stratagate restore {card.id}' brings it back" if action.kind == "forget" else ""
    return f"{DONE[action.kind]} {card.id} (now {state}) (receipt {action.id}){undo}"


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
