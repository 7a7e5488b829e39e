"""The one line a person is shown after a memory action, the same in the CLI and the web.

Purely from the receipt and the event as it now is (``ActionResult``)."""

from .records import ActionResult, MemoryAction

DONE = {"forget": "forgot", "restore": "restored", "pin": "pinned", "unpin": "unpinned"}
RESOLVED = {"keep_both": "kept both", "supersedes": "{event} now supersedes {other}"}


def receipt_line(result: ActionResult) -> str:
    action, card = result.action, result.card
    detail = action.detail
    if action.kind == "purge" and "hashes" in detail:
        return words_purged_line(action)
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


def words_purged_line(action: MemoryAction) -> str:
    """A purge of words (``stratagate purge``): what it erased by count, never the words."""
    counts, detail = action.detail.get("counts", {}), action.detail
    return (
        f"purged the words from {count(counts.get('messages', 0), 'message')}, "
        f"{count(counts.get('blocks', 0), 'block')}, "
        f"{count(counts.get('events_forgotten', 0), 'event')} forgotten, "
        f"{count(counts.get('events_edited', 0), 'event')} edited, "
        f"{count(counts.get('other_rows', 0), 'other row')}; "
        f"{count(len(detail.get('sessions', [])), 'session file')} and "
        f"{count(len(detail.get('backups', {})), 'backup')} rewritten (receipt {action.id})"
    )


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
