"""``ProfileStorage``: fields with revisions, the audit newest first, stale edits refused,
the check run inside the write, proposals replaced and resolved."""

import pytest

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile.storage import FieldChange, ProfileConflict

NOW = "2026-01-02T03:04:05+00:00"


def _allow(values: dict[str, str]) -> None:
    return None


async def test_fields_hold_value_revision_and_time(engine: StrataGate) -> None:
    assert await engine.storage.profile.fields() == {}
    update = await engine.profile.update("user_preferred_name", "Ana")
    found = await engine.storage.profile.fields()
    assert set(found) == {"user_preferred_name"}
    assert (
        found["user_preferred_name"].value == "Ana"
        and found["user_preferred_name"].revision == update.revision
    )
    assert found["user_preferred_name"].updated_at


async def test_changes_are_newest_first_and_paged(engine: StrataGate) -> None:
    await engine.profile.update("user_preferred_name", "Ana")
    await engine.profile.update("user_preferred_name", "Ana Lima")
    both = await engine.storage.profile.changes(10, 0)
    assert [(c.old_value, c.new_value) for c in both] == [("Ana", "Ana Lima"), ("", "Ana")]
    assert [c.id for c in await engine.storage.profile.changes(1, 1)] == [both[1].id]


async def test_a_write_is_idempotent_and_a_stale_revision_refused(engine: StrataGate) -> None:
    store = engine.storage.profile
    modified, revision = await store.write_field(
        FieldChange("user_preferred_name", "Ana", "settings", NOW), _allow
    )
    assert modified and revision > 0
    assert await store.write_field(
        FieldChange("user_preferred_name", "Ana", "settings", NOW), _allow
    ) == (
        False,
        revision,
    )
    stale = FieldChange(
        "user_preferred_name", "Bo", "settings", NOW, expected_revision=revision - 1
    )
    with pytest.raises(ProfileConflict) as caught:
        await store.write_field(stale, _allow)
    assert caught.value.value == "Ana" and caught.value.revision == revision
    assert (await store.fields())["user_preferred_name"].value == "Ana"
    assert len(await store.changes(10, 0)) == 1


async def test_the_check_sees_the_values_after_the_write_and_can_refuse_it(
    engine: StrataGate,
) -> None:
    store = engine.storage.profile
    await store.write_field(FieldChange("user_preferred_name", "Ana", "settings", NOW), _allow)
    seen: list[dict[str, str]] = []

    def refuse(values: dict[str, str]) -> None:
        seen.append(values)
        raise InvalidInput("too long")

    with pytest.raises(InvalidInput):
        await store.write_field(FieldChange("preferred_language", "pt", "settings", NOW), refuse)
    assert seen == [{"user_preferred_name": "Ana", "preferred_language": "pt"}]
    assert set(await store.fields()) == {"user_preferred_name"}


async def test_a_new_proposal_replaces_the_pending_one_and_resolving_ends_it(
    engine: StrataGate,
) -> None:
    store = engine.storage.profile
    first = await store.add_proposal("a:t", "user_preferred_name", "Ana", NOW)
    second = await store.add_proposal("a:t", "user_preferred_name", "Ana Lima", NOW)
    await store.add_proposal("a:other", "user_preferred_name", "Bo", NOW)
    assert [(p.id, p.value) for p in await store.pending_proposals("a:t")] == [(second, "Ana Lima")]
    assert first != second
    await store.resolve_proposal(second, "applied", NOW)
    await store.resolve_proposal(second, "applied", NOW)
    assert await store.pending_proposals("a:t") == []
    assert [p.value for p in await store.pending_proposals("a:other")] == ["Bo"]
