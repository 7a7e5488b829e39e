// The graph page's canvas: reads graph.json and draws it with Cytoscape's built-in
// "cose" layout; a tapped node opens in the side panel (htmx), like the list's links.
(function () {
  "use strict";
  var COLORS = {
    person: "#2f6fdf", project: "#b8641c", organization: "#6a3fb5",
    tool: "#2e8b57", place: "#c0392b", animal: "#8a6d1f"
  };

  function draw(container, data) {
    var elements = [];
    data.nodes.forEach(function (n) {
      elements.push({ group: "nodes", data: { id: n.id, label: n.label, type: n.type, size: 18 + Math.min(n.sources, 12) * 3 } });
    });
    data.edges.forEach(function (e) {
      elements.push({ group: "edges", data: { id: e.id, source: e.source, target: e.target, label: e.label, current: e.current ? 1 : 0 } });
    });
    var cy = window.cytoscape({
      container: container,
      elements: elements,
      layout: { name: "cose", animate: false, padding: 30 },
      maxZoom: 1.5,
      minZoom: 0.2,
      style: [
        { selector: "node", style: {
          label: "data(label)", width: "data(size)", height: "data(size)", "font-size": 11,
          "background-color": function (n) { return COLORS[n.data("type")] || "#777"; }
        } },
        { selector: "edge", style: {
          label: "data(label)", "font-size": 9, width: 1.5, "curve-style": "bezier",
          "target-arrow-shape": "triangle", "line-color": "#999", "target-arrow-color": "#999"
        } },
        { selector: "edge[current = 0]", style: { "line-style": "dashed", opacity: 0.6 } }
      ]
    });
    cy.on("tap", "node", function (event) {
      var url = container.dataset.nodeBase + encodeURIComponent(event.target.id()) + "?" + container.dataset.nodeQuery;
      window.htmx.ajax("GET", url, { target: "#node-panel" });
    });
    container.dataset.ready = "1";
  }

  function start() {
    var container = document.getElementById("graph");
    if (!container || !window.cytoscape) { return; }
    fetch(container.dataset.src, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (data) { draw(container, data); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
