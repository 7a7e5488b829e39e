"""Façade facet: the installation-wide resident profile."""

from ..service_base import ServiceBase
from . import service as profile_service
from .service import ProfileUpdate, ProfileView


class ProfileFacet(ServiceBase):
    async def get_profile(self) -> ProfileView:
        return await profile_service.get_profile(self.db)

    async def update_profile(
        self,
        field: str,
        value: object,
        source: profile_service.Source = "settings",
        expected_revision: int | None = None,
    ) -> ProfileUpdate:
        """One field per call; a stale ``expected_revision`` raises ProfileConflict."""
        return await profile_service.update_field(self.db, field, value, source, expected_revision)

    async def agent_profile_update(
        self, thread_key: str, field: str, value: object, latest_user_message: str
    ) -> ProfileUpdate:
        """The agent's request: applied if the user asked for it, else awaits consent."""
        return await profile_service.agent_update(
            self.db, thread_key, field, value, latest_user_message
        )

    async def settle_profile_proposals(
        self, thread_key: str, user_message: str
    ) -> list[ProfileUpdate]:
        return await profile_service.settle_proposals(self.db, thread_key, user_message)
