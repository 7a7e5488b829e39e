"""The graph's pure rules: keys, resolution, validation, supersede decisions, as-of views."""

from datetime import UTC, datetime

import pytest

from stratagate_plugin.core.graph.projection import (
    Believed,
    Decision,
    ProjectionRejected,
    decide,
    validate_projection,
)
from stratagate_plugin.core.graph.resolution import (
    Known,
    near_matches,
    normalise_key,
    resolve,
    within_one_edit,
)
from stratagate_plugin.core.graph.search import search_nodes
from stratagate_plugin.core.graph.shapes import GraphEdge, GraphFact, GraphNode, GraphProjection
from stratagate_plugin.core.graph.views import Moment, is_current, is_history, node_view
from stratagate_plugin.core.text.search_terms import query_tokens

T0, T1, T2 = (datetime(2024, m, 1, tzinfo=UTC) for m in (1, 3, 6))


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Caroline", "caroline"),
        ("  New   York ", "newyork"),
        ("new_york", "newyork"),
        ("New-York", "newyork"),
        ("ＡＢＣ", "abc"),  # NFKC folds full-width letters
        ("李 雷", "李雷"),
    ],
)
def test_normalise_key_folds_width_case_spacing_and_joiners(name: str, key: str) -> None:
    assert normalise_key(name) == key


def test_resolve_needs_the_same_type_and_a_name_or_alias_key() -> None:
    known = [
        Known("n1", "person", frozenset({"melanie", "mel"})),
        Known("n2", "place", frozenset({"paris"})),
    ]
    assert resolve("person", {"mel"}, known) == "n1"
    assert resolve("organization", {"mel"}, known) is None
    assert resolve("person", {"paris"}, known) is None


def test_near_matches_list_type_mismatch_one_edit_and_prefix_but_not_strangers() -> None:
    candidates = [
        Known("a", "organization", frozenset({"google"})),
        Known("b", "person", frozenset({"carolin"})),
        Known("c", "person", frozenset({"melanie"})),
        Known("d", "person", frozenset({"ian"})),
    ]
    assert near_matches("x", "place", {"google"}, candidates) == {
        "a": "same name, type organization vs place"
    }
    assert set(near_matches("x", "person", {"caroline"}, candidates)) == {"b"}
    assert set(near_matches("x", "person", {"mel"}, candidates)) == {"c"}
    assert (
        near_matches("x", "person", {"ann"}, candidates) == {}
    )  # short names differ by one letter


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("caroline", "carolina", True),
        ("caroline", "carolin", True),
        ("caroline", "caroline", False),
        ("anna", "hanna", True),
        ("ann", "ian", False),
        ("berlin", "dublin", False),
    ],
)
def test_within_one_edit(a: str, b: str, near: bool) -> None:
    assert within_one_edit(a, b) is near


def projection(**parts: object) -> GraphProjection:
    return GraphProjection.model_validate(parts)


def test_a_record_citing_no_event_of_its_batch_rejects_the_whole_projection() -> None:
    bad = projection(
        nodes=[
            {
                "ref": "a",
                "name": "Ana",
                "type": "person",
                "source_event_ids": ["e1"],
                "facts": [{"key": "city", "value": "Rome", "source_event_ids": ["e9"]}],
            },
            {"ref": "b", "name": "Ben", "type": "person", "source_event_ids": ["e2"]},
        ],
        edges=[{"from_ref": "a", "to_ref": "zz", "relation": "knows", "source_event_ids": ["e1"]}],
    )
    with pytest.raises(ProjectionRejected) as caught:
        validate_projection(bad, ["e1", "e2"], exposable=["e1"])
    assert caught.value.problems == [
        "fact a.city cites no exposable event of its batch",
        "node b cites no exposable event of its batch",  # e2 is in the batch but forgotten
        "edge 0 (a -knows-> zz) names a node the projection does not hold",
    ]


def test_foreign_sources_are_dropped_with_a_warning_when_a_valid_one_remains() -> None:
    good = projection(
        nodes=[{"ref": "a", "name": "Ana", "type": "person", "source_event_ids": ["e1", "x"]}]
    )
    checked = validate_projection(good, ["e1"], exposable=["e1", "x"])
    assert checked.projection.nodes[0].source_event_ids == ["e1"]
    assert checked.warnings == ["node a: dropped sources outside the batch ['x']"]


def test_decide_merges_the_same_value_supersedes_others_and_keeps_older_statements_as_history() -> (
    None
):
    believed = [Believed("f1", '"Paris"', "2024-01-01", stated_at="2024-01-05")]
    assert decide('"Paris"', "2024-02-01", believed) == Decision(merge_into="f1")
    assert decide('"Berlin"', "2024-02-01", believed) == Decision(supersede=("f1",))
    assert decide('"Lyon"', "2023-12-01", believed) == Decision(
        history=True, history_until="2024-01-01"
    )


def fact(
    status: str = "active",
    learned: datetime = T0,
    superseded: datetime | None = None,
    sources: tuple[str, ...] = ("e1",),
    valid_from: str | None = None,
    valid_to: str | None = None,
) -> GraphFact:
    return GraphFact(
        id="f",
        node_id="n",
        key="k",
        value="v",
        status=status,
        confidence=0.8,  # type: ignore[arg-type]
        learned_at=learned,
        superseded_at=superseded,
        source_event_ids=sources,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def test_now_a_fact_is_current_only_with_an_active_source() -> None:
    assert is_current(fact(), {"e1": "active"}, Moment())
    only_old = {"e1": "superseded"}
    assert not is_current(fact(), only_old, Moment()) and is_history(fact(), only_old, Moment())
    assert is_history(fact("superseded"), {"e1": "active"}, Moment())
    assert not is_history(fact("archived"), {"e1": "active"}, Moment())


def test_as_of_is_what_was_believed_then() -> None:
    replaced = fact(
        "superseded", learned=T0, superseded=T2, valid_from="2024-01-01", valid_to="2024-05-01"
    )
    status = {"e1": "active"}
    assert is_current(replaced, status, Moment(T1))  # believed in March
    assert not is_current(replaced, status, Moment(T2)) and is_history(replaced, status, Moment(T2))
    assert not is_current(fact(learned=T1), status, Moment(T0))  # not learned yet in January
    assert not is_history(fact(learned=T1), status, Moment(T0))
    # what we believe now about a valid time: true in February, no longer in April
    dated = fact(valid_from="2024-01-01", valid_to="2024-03-01")
    assert is_current(dated, status, Moment(valid_at="2024-02-10"))
    assert not is_current(dated, status, Moment(valid_at="2024-04-10"))
    # believed in March, about February: the later end (set in June) was not known yet
    assert is_current(replaced, status, Moment(T1, "2024-05-10"))
    assert not is_current(replaced, status, Moment(T2, "2024-05-10"))


def ana_node(node_id: str) -> GraphNode:
    return GraphNode(
        id=node_id,
        namespace="ns",
        name="Ana",
        type="person",
        source_event_ids=("e1",),
        created_at=T0,
        updated_at=T0,
    )


def test_a_view_as_of_a_date_hides_the_later_end_of_what_was_believed() -> None:
    node = ana_node("n")
    replaced = fact(
        "superseded", learned=T0, superseded=T2, valid_from="2024-01-01", valid_to="2024-05-01"
    )
    view = node_view(node, [replaced], [], {}, {"e1": "active"}, Moment(T1))
    [shown] = view.current_facts
    assert (shown.status, shown.valid_to) == ("active", None)


def test_search_ignores_relation_only_matches_and_tells_current_from_historical() -> None:
    ana = ana_node("n1")
    rome = ana.model_copy(update={"id": "n2", "name": "Rome", "type": "place"})
    old_city = fact("superseded").model_copy(update={"key": "city", "value": "Lisbon"})
    edge = GraphEdge(
        id="g",
        from_node_id="n2",
        to_node_id="n1",
        relation="visited",
        status="active",
        confidence=0.8,
        learned_at=T0,
        source_event_ids=("e1",),
    )
    status = {"e1": "active"}
    views = [
        node_view(ana, [old_city], [], {}, status),
        node_view(rome, [], [edge], {"n1": "Ana"}, status),
    ]
    assert search_nodes(query_tokens("visited"), views) == []  # relation text is ranking-only
    [hit] = search_nodes(query_tokens("Lisbon"), views)
    assert (hit.view.node.name, hit.match_type, hit.matched_fields) == (
        "Ana",
        "historical",
        ("historicalFacts",),
    )
    names = [h.view.node.name for h in search_nodes(query_tokens("Ana"), views)]
    assert names == ["Ana", "Rome"]  # named first, then the node whose edge ends at her


def test_facts_and_edges_citing_only_replaced_events_are_dropped_not_made_current() -> None:
    projection = GraphProjection.model_validate(
        {
            "nodes": [
                {"ref": "a", "name": "Ana", "type": "person", "source_event_ids": ["old"],
                 "facts": [{"key": "city", "value": "Rome", "source_event_ids": ["old"]},
                           {"key": "job", "value": "nurse", "source_event_ids": ["old", "new"]}]},
                {"ref": "r", "name": "Rome", "type": "place", "source_event_ids": ["old"]},
            ],
            "edges": [{"from_ref": "a", "to_ref": "r", "relation": "lives_in",
                       "source_event_ids": ["old"]}],
        }
    )  # fmt: skip
    checked = validate_projection(projection, ["old", "new"], ["old", "new"], active=["new"])
    [ana, rome] = checked.projection.nodes
    assert [f.key for f in ana.facts] == ["job"] and checked.projection.edges == []
    assert ana.source_event_ids == rome.source_event_ids == ["old"]  # nodes keep theirs
    assert any("replaced events" in warning for warning in checked.warnings)
