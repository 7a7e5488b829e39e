"""The knowledge graph as a channel of the fused ranking: off by default (recall@10 on the
LoCoMo dev conversations is lower with it, docs/graph-topics-measurements.md); weighted, it
ranks the messages cited by the facts and edges of matching nodes that share a query term
besides the node's own name, the best-matching statement first."""

from dataclasses import replace

from stratagate_plugin.core.memory import StrataGate
from stratagate_plugin.core.retrieval.fused import FUSION
from tests.test_graph_offline import ENGLISH, converse


async def test_the_graph_channel_is_off_by_default_and_ranks_cited_messages_when_weighted(
    memory: StrataGate,
) -> None:
    await converse(memory, "en", ENGLISH)
    question = "Where does Caroline live now, Berlin?"
    assert (await memory.retrieval.channel_rankings("en", question))["graph"] == []
    weighted = replace(FUSION, graph_weight=0.5)
    rankings = await memory.retrieval.channel_rankings("en", question, 10, weighted)
    [caroline] = [v for v in await memory.graph.nodes("en") if v.node.name == "Caroline"]
    [berlin] = [f for f in caroline.current_facts if f.key == "lives_in"]
    cards = {e.id: e for e in await memory.events.cards("en")}
    cited = [m for i in berlin.source_event_ids for m in cards[i].source_message_ids]
    assert rankings["graph"][: len(cited)] == cited  # the matched fact's evidence first
    found = await memory.retrieval.retrieve("en", question, 10, weighted)
    assert any("graph" in hit.channels for hit in found)
    assert all(
        "graph" not in hit.channels for hit in await memory.retrieval.retrieve("en", question, 10)
    )
