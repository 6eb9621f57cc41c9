// fsmviz page behaviour. The server re-renders the DFA on every frame and step; what the
// visitor chose here (zoom, where the drawing is scrolled) is kept in `view` and put back on
// each new drawing. The drawing follows the current state inside its own scroll box only:
// the window is never scrolled. Clicks on the chart, table rows, output tokens and the
// stepper become Step slider changes; the URL follows every edit (a link restores the run).
() => {
  const view = { zoom: 1, fit: false, chosen: false, left: 0, top: 0 };
  const $ = (selector) => document.querySelector(selector);
  const setNumber = (elemId, value) => {
    const input = $(`#${elemId} input[type=number]`);
    if (!input) return;
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const setText = (elemId, value) => {
    const box = $(`#${elemId} textarea, #${elemId} input`);
    if (!box) return;
    box.value = value;
    box.dispatchEvent(new Event("input", { bubbles: true }));
  };

  // --- the step: Prev / Next / Play, arrow keys ------------------------------------------
  const stepRange = () => {
    const range = $("#step input[type=range]");
    if (!range || range.disabled) return null;
    return { now: Number(range.value), max: Number(range.max), rows: document.querySelectorAll("#steps tbody tr").length };
  };
  const moveStep = (delta) => {
    const r = stepRange();
    if (!r || !r.rows) return false;
    const next = Math.min(Math.max(r.now + delta, 0), r.rows - 1);
    if (next !== r.now) setNumber("step", next);
    return next !== r.now;
  };
  let playing = null;
  const stopPlaying = () => {
    if (playing) clearInterval(playing);
    playing = null;
    const button = $("[data-stepper=play]");
    if (button) button.textContent = "▶ Play";
  };
  const play = () => {
    if (playing) return stopPlaying();
    const r = stepRange();
    if (!r || !r.rows) return;
    if (r.now >= r.rows - 1) setNumber("step", 0);
    $("[data-stepper=play]").textContent = "⏸ Pause";
    playing = setInterval(() => { if (!moveStep(1)) stopPlaying(); }, 800);
  };
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest("input, textarea, select, [contenteditable]");
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight" && moveStep(1)) event.preventDefault();
    if (event.key === "ArrowLeft" && moveStep(-1)) event.preventDefault();
  });

  // --- the drawing: zoom kept, followed inside its box -------------------------------------
  // Until the visitor zooms, a drawing that fits its box at 70 % of graphviz's size or more
  // is shown whole (all of a small automaton at once, title and start included); a larger
  // one keeps its size, readable, and the box follows the current state.
  const AUTO_FIT = 0.7;
  const fitsWhole = (box) => {
    const natural = parseFloat(box.style.getPropertyValue("--natural")) || 0;
    return natural > 0 && box.clientWidth >= AUTO_FIT * natural;
  };
  const apply = (box) => {
    box.style.setProperty("--zoom", String(view.zoom));
    box.classList.toggle("fit", view.fit || (!view.chosen && fitsWhole(box)));
  };
  const setZoom = (zoom, fit = false) => {
    view.zoom = Math.min(Math.max(zoom, 0.25), 12);
    view.fit = fit;
    view.chosen = true;
    const box = $("#dfa .dfa-scroll");
    if (box) { apply(box); follow(box); }
  };
  const follow = (box) => {
    // in a compact drawing the current state may be inside a folded run: its edge is lit
    const current = box.querySelector(".node.current, .edge.current");
    if (!current) return;
    const b = box.getBoundingClientRect();
    const r = current.getBoundingClientRect();
    if (r.left < b.left || r.right > b.right) box.scrollLeft += r.left + r.width / 2 - (b.left + b.width / 2);
    if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += r.top + r.height / 2 - (b.top + b.height / 2);
  };
  const adopt = () => {
    const box = $("#dfa .dfa-scroll");
    if (!box || box.dataset.adopted) return;
    box.dataset.adopted = "1";
    apply(box);
    box.scrollLeft = view.left;
    box.scrollTop = view.top;
    follow(box);
    box.addEventListener("scroll", () => { view.left = box.scrollLeft; view.top = box.scrollTop; });
    box.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return; // plain wheel scrolls; Ctrl + wheel (or a pinch) zooms
      event.preventDefault();
      setZoom(view.zoom * (event.deltaY < 0 ? 1.2 : 1 / 1.2));
    }, { passive: false });
  };
  new MutationObserver(adopt).observe(document.body, { childList: true, subtree: true });

  // --- the link: follows every edit; opening it restores inputs, step and run ------------
  const field = (id, kind) => $(`#${id} ${kind}`);
  const link = () => {
    const value = (id, kind) => field(id, kind)?.value ?? "";
    const params = new URLSearchParams({
      regex: value("regex", "textarea"),
      prompt: value("prompt", "textarea"),
      max_tokens: value("max-tokens", "input[type=number]"),
      temperature: value("temperature", "input[type=number]"),
      seed: value("seed", "input"),
      chat: field("chat", "input[type=checkbox]")?.checked ? "1" : "0",
    });
    const limit = value("prob-limit", "input");
    if (limit && Number(limit)) params.set("prob_limit", limit);
    const mode = $("#schema-mode .schema-mode");  // the Regex box holds a schema's regex
    if (mode) { params.set("schema", mode.dataset.schema); params.set("whitespace", mode.dataset.whitespace); }
    const chosen = $("#steps tbody tr.selected");
    if (chosen) { params.set("run", "1"); params.set("step", chosen.dataset.step); }
    return params;
  };
  let loaded = false;
  const updateLink = () => {
    if (!loaded) return;
    const query = "?" + link().toString();
    if (query !== location.search) history.replaceState(null, "", query);
  };
  setInterval(updateLink, 700); // also after the server's updates (a chosen step, a run)
  document.addEventListener("input", (event) => {
    if (event.target.closest(".allowed-filter")) return filterAllowed(event.target);
    if (event.target.closest("#regex, #prompt, #max-tokens, #temperature, #seed, #prob-limit, #step")) updateLink();
  });
  document.addEventListener("change", (event) => {
    if (event.target.closest("#chat, #max-tokens, #temperature, #seed, #prob-limit, #step")) updateLink();
  });
  const restore = new URLSearchParams(location.search);
  const ready = setInterval(() => {
    const status = $("#status")?.textContent || "";
    if (!status.includes("Model:") || !field("regex", "textarea")?.value) return;
    clearInterval(ready);
    setTimeout(() => {
      loaded = true;
      if (restore.get("run") !== "1") return updateLink();
      $("#run")?.click();
      const wanted = Number(restore.get("step"));
      const chosen = setInterval(() => {
        if (!(document.querySelector("#status")?.textContent || "").trim().startsWith("Done")) return;
        const r = stepRange();
        if (!r || !r.rows) return;
        clearInterval(chosen);
        if (Number.isInteger(wanted) && wanted >= 0 && wanted < r.rows) setNumber("step", wanted);
      }, 300);
    }, 300); // let the page-load handler's values land first
  }, 200);

  const filterAllowed = (input) => {
    const needle = input.value.toLowerCase();
    for (const li of input.closest(".allowed-view").querySelectorAll(".allowed-list li")) {
      li.hidden = needle !== "" && !li.dataset.token.toLowerCase().includes(needle);
    }
  };

  // --- Apply & run: the comparison is brought into view once, when the run is over ------
  let applied = 0;
  let oldComparison = undefined; // undefined: nothing to bring into view
  new MutationObserver(() => {
    if (oldComparison === undefined) return;
    const shown = $("#comparison-view .comparison");
    // once the run is over: Stop hidden again may move everything below it up
    if (!shown || shown === oldComparison || !shown.offsetParent || $("#run")?.disabled) return;
    oldComparison = undefined;
    $("#comparison").scrollIntoView({ behavior: "smooth", block: "start" });
  }).observe(document.body, { childList: true, subtree: true, attributes: true });

  // --- clicks ---------------------------------------------------------------------------
  document.addEventListener("click", (event) => {
    const zoom = event.target.closest("[data-zoom]");
    if (zoom) {
      const how = zoom.dataset.zoom;
      if (how === "fit") setZoom(1, true);
      else setZoom(how === "in" ? view.zoom * 1.5 : view.zoom / 1.5, view.fit);
      return;
    }
    const stepper = event.target.closest("[data-stepper]");
    if (stepper) {
      const what = stepper.dataset.stepper;
      if (what === "play") return play();
      stopPlaying();
      moveStep(what === "next" ? 1 : -1);
      return;
    }
    if (event.target.closest("#copy-link")) {
      updateLink();
      const url = location.origin + location.pathname + "?" + link().toString();
      const button = $("#copy-link");
      const said = () => { button.textContent = "Link copied"; setTimeout(() => { button.textContent = "Copy link"; }, 1500); };
      button.dataset.url = url; // also where a test (or a browser without clipboard) finds it
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(said, () => { button.textContent = "Copy the address bar"; });
      else said();
      return;
    }
    // Apply & run: the finding's fix (JSON) to the server, with a counter so that the
    // same fix applied twice is still a change; ignored while a run goes.
    const fix = event.target.closest("#diagnosis [data-fix]");
    if (fix) {
      if ($("#run")?.disabled) return;
      applied += 1;
      oldComparison = $("#comparison-view .comparison");
      setText("apply-pick", JSON.stringify({ ...JSON.parse(fix.dataset.fix), n: applied }));
      return;
    }
    const row = event.target.closest("#steps tr[data-step], #output .tok[data-step]");
    if (row) { stopPlaying(); setNumber("step", row.dataset.step); return; }
    const finding = event.target.closest("#diagnosis [data-finding]");
    if (finding) return setNumber("finding-pick", finding.dataset.finding);
    const schemaFix = event.target.closest("#schema-findings [data-schema-fix]");
    if (schemaFix) setNumber("schema-fix-pick", schemaFix.dataset.schemaFix);
  });

  // Clicking a point of the valid-mass chart chooses that step.
  const hook = () => {
    const plot = $("#valid-mass .js-plotly-plot");
    if (plot && plot.on && !plot.dataset.fsmvizHooked) {
      plot.dataset.fsmvizHooked = "1";
      plot.on("plotly_click", (data) => { if (data.points.length) setNumber("step", data.points[0].x); });
    }
  };
  setInterval(hook, 500);
}
