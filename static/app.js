// fsmviz page behaviour: zoom the DFA, keep the current state in view, and turn clicks on
// the chart, the table rows and the findings into the Step slider / finding picker.
() => {
  const setNumber = (elemId, value) => {
    const input = document.querySelector(`#${elemId} input[type=number]`);
    if (!input) return;
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  document.addEventListener("click", (event) => {
    const zoom = event.target.closest("[data-zoom]");
    if (zoom) {
      const scroll = zoom.closest(".dfa-view").querySelector(".dfa-scroll");
      const now = parseFloat(scroll.style.getPropertyValue("--zoom") || "1");
      const next = { in: now * 1.5, out: Math.max(now / 1.5, 1), fit: 1 }[zoom.dataset.zoom];
      scroll.style.setProperty("--zoom", String(next));
      return;
    }
    const row = event.target.closest("#steps tr[data-step], #output .tok[data-step]");
    if (row) { setNumber("step", row.dataset.step); return; }
    const finding = event.target.closest("#diagnosis [data-finding]");
    if (finding) setNumber("finding-pick", finding.dataset.finding);
  });
  // Keep the lit state in view while tokens stream.
  new MutationObserver(() => {
    const current = document.querySelector("#dfa .node.current");
    if (current) current.scrollIntoView({ block: "nearest", inline: "center" });
  }).observe(document.body, { childList: true, subtree: true });
  // Clicking a point of the valid-mass chart chooses that step.
  const hook = () => {
    const plot = document.querySelector("#valid-mass .js-plotly-plot");
    if (plot && plot.on && !plot.dataset.fsmvizHooked) {
      plot.dataset.fsmvizHooked = "1";
      plot.on("plotly_click", (data) => { if (data.points.length) setNumber("step", data.points[0].x); });
    }
  };
  setInterval(hook, 500);
}
