"""Resident-profile use cases: read, one-field updates, agent proposals and consent."""

import sqlite3
from typing import Literal

from pydantic import BaseModel

from ..clock import iso, utc_now
from ..store import Database
from ..store import profile_rows as rows
from . import fields as rules

Source = Literal["settings", "user_explicit", "agent_tool", "maintenance"]


class ProfileView(BaseModel):
    values: dict[str, str]
    revisions: dict[str, int]

    def rendered(self) -> str | None:
        return rules.render_profile(self.values)


class ProfileUpdate(BaseModel):
    field: str
    value: str
    modified: bool
    revision: int
    status: Literal["applied", "unchanged", "awaiting_consent"]
    message: str


async def get_profile(db: Database) -> ProfileView:
    stored = await db.read(rows.read_profile)
    return ProfileView(
        values={f: stored.get(f, ("", 0))[0] for f in rules.FIELD_NAMES},
        revisions={f: stored.get(f, ("", 0))[1] for f in rules.FIELD_NAMES},
    )


async def update_field(
    db: Database,
    field: str,
    value: object,
    source: Source,
    expected_revision: int | None = None,
    message_id: str | None = None,
) -> ProfileUpdate:
    """Apply one field now (settings page, explicit user request, maintenance)."""
    rules.field_of(field)
    text = rules.clean_value(field, value)
    now = iso(utc_now())

    def unit(raw: sqlite3.Connection) -> tuple[bool, int]:
        current = {f: v for f, (v, _) in rows.read_profile(raw).items()}
        rules.check_total({**current, field: text})
        return rows.write_field(raw, field, text, source, now, expected_revision, message_id)

    modified, revision = await db.write(unit)
    status: Literal["applied", "unchanged"] = "applied" if modified else "unchanged"
    return ProfileUpdate(
        field=field,
        value=text,
        modified=modified,
        revision=revision,
        status=status,
        message=f"{field} {status}",
    )


async def agent_update(
    db: Database, thread_key: str, field: str, value: object, latest_user_message: str
) -> ProfileUpdate:
    """The agent's tool call: applied when the user's own message asked for it, else proposed."""
    rules.field_of(field)
    text = rules.clean_value(field, value)
    if rules.user_asked_for(text, latest_user_message):
        return await update_field(db, field, text, "user_explicit")
    now = iso(utc_now())
    await db.write(lambda raw: rows.add_proposal(raw, thread_key, field, text, now))
    return ProfileUpdate(
        field=field,
        value=text,
        modified=False,
        revision=0,
        status="awaiting_consent",
        message=(
            f"Not applied yet: tell the user you propose to set {field} to {text!r} and "
            "apply it only if their next message explicitly agrees."
        ),
    )


async def settle_proposals(db: Database, thread_key: str, user_message: str) -> list[ProfileUpdate]:
    """Called with the user's next message: explicit agreement applies, anything else refuses."""
    pending = await db.read(lambda raw: rows.pending_proposals(raw, thread_key))
    if not pending:
        return []
    agreed = rules.is_explicit_consent(user_message)
    now = iso(utc_now())
    applied: list[ProfileUpdate] = []
    status = "applied" if agreed else "refused"
    for proposal in pending:
        if agreed:
            applied.append(
                await update_field(db, proposal["field"], proposal["value"], "agent_tool")
            )
        await _resolve(db, proposal["id"], status, now)
    return applied


async def _resolve(db: Database, proposal_id: str, status: str, now: str) -> None:
    await db.write(lambda raw: rows.resolve_proposal(raw, proposal_id, status, now))
