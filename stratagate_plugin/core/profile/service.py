"""Resident-profile use cases: read, one-field updates, agent proposals and consent.

A settings edit names the revision it was made from; a stale one raises
``ProfileConflict`` (with the stored value), so an edit never overwrites a change the
editor has not seen. Every change is kept in the audit, read back newest first.
"""

from typing import Literal

from pydantic import BaseModel, Field

from ..clock import iso, utc_now
from ..service_base import ServiceBase
from . import fields as rules
from .storage import (
    FieldChange,
    ProfileChange,
    ProfileConflict,
    ProfileStorage,
    Source,
    StoredField,
)

__all__ = ["ProfileChange", "ProfileConflict", "ProfileService", "ProfileUpdate", "ProfileView"]


class ProfileView(BaseModel):
    """Each field's value and revision (0: never set); ``updated_at`` for set ones."""

    values: dict[str, str]
    revisions: dict[str, int]
    updated_at: dict[str, str] = Field(default_factory=dict)

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

    @property
    def store(self) -> ProfileStorage:
        return self.storage.profile

    async def get(self) -> ProfileView:
        stored = await self.store.fields()
        unset = StoredField("", 0, "")
        return ProfileView(
            values={f: stored.get(f, unset).value for f in rules.FIELD_NAMES},
            revisions={f: stored.get(f, unset).revision for f in rules.FIELD_NAMES},
            updated_at={f: row.updated_at for f, row in stored.items()},
        )

    async def history(self, limit: int = 50, offset: int = 0) -> list[ProfileChange]:
        """The profile's changes, newest first, one page."""
        return await self.store.changes(limit, offset)

    async def update(
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
        change = FieldChange(field, text, source, iso(utc_now()), expected_revision, message_id)
        modified, revision = await self.store.write_field(change, rules.check_total)
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
        self, thread_key: str, field: str, value: object, latest_user_message: str
    ) -> ProfileUpdate:
        """The agent's tool call: applied when the user's own message asked for it, else
        proposed."""
        rules.field_of(field)
        text = rules.clean_value(field, value)
        if rules.user_asked_for(text, latest_user_message):
            return await self.update(field, text, "user_explicit")
        now = iso(utc_now())
        await self.store.add_proposal(thread_key, field, text, now)
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

    async def settle_proposals(self, thread_key: str, user_message: str) -> list[ProfileUpdate]:
        """With the user's next message: explicit agreement applies, anything else refuses."""
        pending = await self.store.pending_proposals(thread_key)
        if not pending:
            return []
        agreed = rules.is_explicit_consent(user_message)
        now = iso(utc_now())
        applied: list[ProfileUpdate] = []
        status = "applied" if agreed else "refused"
        for proposal in pending:
            if agreed:
                applied.append(await self.update(proposal.field, proposal.value, "agent_tool"))
            await self._resolve_proposal(proposal.id, status, now)
        return applied

    async def apply_requested_proposals(
        self, thread_key: str, user_message: str
    ) -> list[ProfileUpdate]:
        """For a host that hears the user's message only once the turn is over (an MCP
        client recording it): the pending proposal that very message asked for is applied
        as the user's request, as ``agent_profile_update`` would have done had it seen the
        message; any other stays pending for the user's next message."""
        pending = await self.store.pending_proposals(thread_key)
        now = iso(utc_now())
        applied: list[ProfileUpdate] = []
        for proposal in pending:
            if rules.user_asked_for(proposal.value, user_message):
                field, value = proposal.field, proposal.value
                applied.append(await self.update(field, value, "user_explicit"))
                await self._resolve_proposal(proposal.id, "applied", now)
        return applied

    async def _resolve_proposal(self, proposal_id: str, status: str, now: str) -> None:
        await self.store.resolve_proposal(proposal_id, status, now)
