"""Resident profile: limits, rendering, revisions, audit and the consent rule."""

import sqlite3

import pytest

from stratagate_plugin.core.errors import InvalidInput
from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.profile import fields as rules
from stratagate_plugin.core.profile.spaces import display_name, space_for
from stratagate_plugin.core.store.profile_rows import ProfileConflict


def test_twelve_fields_with_limits() -> None:
    assert len(rules.FIELDS) == 12
    assert sum(f.limit for f in rules.FIELDS) > rules.TOTAL_LIMIT
    assert rules.field_of("user_background").limit == 1500


@pytest.mark.parametrize(("field", "value"), [("home_city", "x" * 101), ("nope", "x")])
def test_invalid_fields_and_lengths_are_refused(field: str, value: str) -> None:
    with pytest.raises(InvalidInput):
        rules.clean_value(field, value)


def test_limits_count_code_points_not_bytes() -> None:
    assert rules.clean_value("home_city", "北" * 100) == "北" * 100


def test_rendering_shows_only_set_fields() -> None:
    assert rules.render_profile({f: "" for f in rules.FIELD_NAMES}) is None
    text = rules.render_profile({"user_preferred_name": "Mara", "current_city": "Lisbon"})
    assert text is not None and text.startswith("[StrataGate Persistent Profile]")
    assert "User's preferred name: Mara" in text and "Current city: Lisbon" in text
    assert "Home city" not in text and "Default location" not in text


@pytest.mark.parametrize("reply", ["同意", "yes", "OK!", "go ahead", "好的。", "Sure"])
def test_explicit_consent(reply: str) -> None:
    assert rules.is_explicit_consent(reply)


@pytest.mark.parametrize(
    "reply", ["", "no", "maybe later", "what's the weather?", "yes but call me Ana instead"]
)
def test_anything_else_is_not_consent(reply: str) -> None:
    assert not rules.is_explicit_consent(reply)


async def test_updates_are_audited_with_revisions(
    memory: StrataGate, plain: sqlite3.Connection
) -> None:
    first = await memory.profile.update("home_city", "Leeds", "settings")
    same = await memory.profile.update("home_city", "Leeds", "settings")
    assert first.modified and not same.modified and same.revision == first.revision
    second = await memory.profile.update(
        "home_city", "York", "settings", expected_revision=first.revision
    )
    with pytest.raises(ProfileConflict, match="updated elsewhere"):
        await memory.profile.update(
            "home_city", "Hull", "settings", expected_revision=first.revision
        )
    view = await memory.profile.get()
    assert view.values["home_city"] == "York" and view.revisions["home_city"] == second.revision
    assert view.values["current_city"] == ""
    audit = plain.execute("SELECT field, old_value, new_value, source FROM profile_changes")
    assert [tuple(r) for r in audit] == [
        ("home_city", "", "Leeds", "settings"),
        ("home_city", "Leeds", "York", "settings"),
    ]


async def test_total_limit_is_enforced(memory: StrataGate) -> None:
    for field in (
        "user_background",
        "persistent_notes",
        "long_term_goals",
        "response_preferences",
        "standing_instructions",
        "user_preferred_name",
        "assistant_preferred_name",
    ):
        await memory.profile.update(field, "x" * rules.field_of(field).limit, "settings")
    with pytest.raises(InvalidInput, match="6000"):
        await memory.profile.update("default_location", "y" * 200, "settings")


async def test_user_request_applies_directly(memory: StrataGate) -> None:
    result = await memory.profile.agent_update(
        "t1",
        "user_preferred_name",
        "Mara",
        latest_user_message="Please call me Mara from now on.",
    )
    assert result.status == "applied"
    assert (await memory.profile.get()).values["user_preferred_name"] == "Mara"


async def test_agent_proposal_waits_for_explicit_agreement(memory: StrataGate) -> None:
    proposed = await memory.profile.agent_update(
        "t1",
        "current_city",
        "Porto",
        latest_user_message="I'm flying out tomorrow morning.",
    )
    assert proposed.status == "awaiting_consent"
    assert (await memory.profile.get()).values["current_city"] == ""
    applied = await memory.profile.settle_proposals("t1", "同意")
    assert [u.value for u in applied] == ["Porto"]
    assert (await memory.profile.get()).values["current_city"] == "Porto"
    assert await memory.profile.settle_proposals("t1", "同意") == []  # one change, one consent


async def test_refusal_or_topic_change_discards_the_proposal(memory: StrataGate) -> None:
    await memory.profile.agent_update("t1", "current_city", "Porto", "I'm travelling.")
    assert await memory.profile.settle_proposals("t1", "What's on my calendar?") == []
    assert await memory.profile.settle_proposals("t1", "yes") == []
    assert (await memory.profile.get()).values["current_city"] == ""


async def test_a_proposal_its_own_turn_asked_for_applies_once_the_turn_is_heard(
    memory: StrataGate,
) -> None:
    """An MCP client's turn arrives after its tool calls: a proposal the user's message of
    that turn asked for is the user's request; any other waits for the next message."""
    await memory.profile.agent_update("t1", "user_preferred_name", "Mara", "")
    applied = await memory.profile.apply_requested_proposals(
        "t1", "Please call me Mara from now on."
    )
    assert [(u.value, u.status) for u in applied] == [("Mara", "applied")]
    assert await memory.profile.settle_proposals("t1", "yes") == []  # no longer pending
    await memory.profile.agent_update("t1", "current_city", "Porto", "")
    assert await memory.profile.apply_requested_proposals("t1", "I'm flying out tomorrow.") == []
    assert [u.value for u in await memory.profile.settle_proposals("t1", "yes")] == ["Porto"]
    changes = await memory.profile.history()
    assert [(c.field, c.source) for c in changes] == [
        ("current_city", "agent_tool"),
        ("user_preferred_name", "user_explicit"),
    ]


async def test_proposals_are_per_conversation(memory: StrataGate) -> None:
    await memory.profile.agent_update("t1", "home_city", "Bath", "moving soon")
    assert await memory.profile.settle_proposals("t2", "yes") == []
    assert len(await memory.profile.settle_proposals("t1", "yes")) == 1


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("project", "sg:project:/home/u/shop"),
        ("session", "sg:session:s9"),
        ("global", "sg:global:global"),
    ],
)
def test_memory_space_namespaces(mode: str, expected: str) -> None:
    assert space_for(mode, cwd="/home/u/shop/", session_id="s9") == expected


def test_space_display_names_and_bad_mode() -> None:
    assert display_name("sg:project:/home/u/shop") == "shop"
    assert space_for("project", cwd="C:\\work\\app", session_id="s") == "sg:project:C:/work/app"
    with pytest.raises(InvalidInput):
        space_for("team", cwd="/", session_id="s")
