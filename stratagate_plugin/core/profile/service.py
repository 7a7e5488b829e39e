"""Resident-profile use cases: read, one-field updates, agent proposals and consent."""

import sqlite3
from typing import Literal

from pydantic import BaseModel

from ..clock import iso, utc_now
from ..service_base import ServiceBase
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


class ProfileService(ServiceBase):
    """The installation-wide resident profile on the ``StrataGate`` façade."""

    async def get_profile(self) -> ProfileView:
        stored = await self.db.read(rows.read_profile)
        return ProfileView(
            values={f: stored.get(f, ("", 0))[0] for f in rules.FIELD_NAMES},
            revisions={f: stored.get(f, ("", 0))[1] for f in rules.FIELD_NAMES},
        )

    async def update_profile(
        self,
        field: str,
        value: object,
        source: Source = "settings",
        expected_revision: int | None = None,
        message_id: str | None = None,
    ) -> ProfileUpdate:
        """Apply one field now; a stale ``expected_revision`` raises ProfileConflict."""
        rules.field_of(field)
        text = rules.clean_value(field, value)
        now = iso(utc_now())

        def unit(raw: sqlite3.Connection) -> tuple[bool, int]:
            current = {f: v for f, (v, _) in rows.read_profile(raw).items()}
            rules.check_total({**current, field: text})
            return rows.write_field(raw, field, text, source, now, expected_revision, message_id)

        modified, revision = await self.db.write(unit)
        status: Literal["applied", "unchanged"] = "applied" if modified else "unchanged"
        return ProfileUpdate(
            field=field,
            value=text,
            modified=modified,
            revision=revision,
            status=status,
            message=f"{field} {status}",
        )

    async def agent_profile_update(
        self, thread_key: str, field: str, value: object, latest_user_message: str
    ) -> ProfileUpdate:
        """The agent's tool call: applied when the user's own message asked for it, else
        proposed."""
        rules.field_of(field)
        text = rules.clean_value(field, value)
        if rules.user_asked_for(text, latest_user_message):
            return await self.update_profile(field, text, "user_explicit")
        now = iso(utc_now())
        await self.db.write(lambda raw: rows.add_proposal(raw, thread_key, field, text, now))
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

    async def settle_profile_proposals(
        self, thread_key: str, user_message: str
    ) -> list[ProfileUpdate]:
        """With the user's next message: explicit agreement applies, anything else refuses."""
        pending = await self.db.read(lambda raw: rows.pending_proposals(raw, thread_key))
        if not pending:
            return []
        agreed = rules.is_explicit_consent(user_message)
        now = iso(utc_now())
        applied: list[ProfileUpdate] = []
        status = "applied" if agreed else "refused"
        for proposal in pending:
            if agreed:
                applied.append(
                    await self.update_profile(proposal["field"], proposal["value"], "agent_tool")
                )
            await self._resolve_proposal(proposal["id"], status, now)
        return applied

    async def _resolve_proposal(self, proposal_id: str, status: str, now: str) -> None:
        await self.db.write(lambda raw: rows.resolve_proposal(raw, proposal_id, status, now))
