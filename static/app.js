// fsmviz page behaviour. The server sends the DFA once per run (with its first frame) and
// each streamed row of the step table brings its step's lights, applied here (lightLive);
// what the visitor chose (zoom, where the drawing is scrolled) is kept in `view` and put
// back on each new drawing. The drawing follows the current state inside its own scroll box only:
// the window is never scrolled. A finished run's steps are stepped through here, in the
// browser (Prev / Next / Play, keys, clicks on the chart, rows and tokens): the drawing,
// the row, the token, the step's card and its allowed set change at once, and the Step
// slider follows; the URL follows every edit (a link restores the run and its step). The
// Grammar tab's Prev / Next / Play and keys are these too (its steps painted by
// static/grammar.js with the pieces in window.fsmvizStepping).
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

  // --- the step: chosen and painted here, at once ----------------------------------------
  // A finished run brings every step's lights (the drawing's hidden .lights element) and
  // allowed set (#allowed-tokens' .allowed-data), as JSON in their data-json: choosing a step
  // lights its state, its row, its token, its card and its allowed set in the browser, with
  // no round trip; the Step slider follows, so the server knows the step for redraws.
  const parsed = new WeakMap();
  // Kept per element and its text: Gradio patches a redrawn HTML output in place (a
  // compact drawing's lights become the exact one's in the same element), so the text
  // decides. (Not a <template>: its content is no child node, and Gradio's patch kept it.)
  const dataOf = (selector) => {
    const t = typeof selector === "string" ? $(selector) : selector;
    if (!t) return null;
    const text = t.dataset.json || "";
    const kept = parsed.get(t);
    if (!kept || kept.text !== text) {
      let data = null;
      try { data = JSON.parse(text); } catch { data = null; }
      parsed.set(t, { text, data });
    }
    return parsed.get(t).data;
  };
  const rowsOf = () => document.querySelectorAll("#steps tbody tr[data-step]");
  // the character DFA's (a grammar-path schema's drawing panel holds its structure instead,
  // with lights of its own: #schema-structure)
  const DFA_SVG = "#dfa .dfa-scroll svg";
  const DFA_LIGHTS = "#dfa .dfa-view > .lights";
  // what a step adds to the run's past (states visited, edges taken), and where it is
  const addPast = (svg, lit) => {
    for (const c of lit.v) for (const n of svg.querySelectorAll(`g.node.${c}`)) n.classList.add("visited");
    for (const c of lit.e) for (const e of svg.querySelectorAll(`g.edge.${c}`)) e.classList.add("taken");
  };
  const markCurrent = (svg, lit) => {
    for (const el of svg.querySelectorAll(".current")) el.classList.remove("current");
    for (const t of svg.querySelectorAll("text[data-was]")) { t.textContent = t.dataset.was; t.removeAttribute("data-was"); }
    const node = lit.c ? svg.querySelector(`g.node.${lit.c}`) : null;
    if (node) {
      node.classList.add("current");
      const label = lit.n ? node.querySelector("text") : null;
      if (label) { label.dataset.was = label.textContent; label.textContent = lit.n; }
    }
    if (lit.l) for (const e of svg.querySelectorAll(`g.edge.${lit.l}`)) e.classList.add("current");
    const where = $("#dfa .dfa-bar .where");
    if (where) where.textContent = lit.w;
  };
  const lightStep = (svg, lights, i) => {
    for (const el of svg.querySelectorAll(".visited, .taken")) el.classList.remove("visited", "taken");
    const k = Math.min(i, lights.length - 1);
    for (let j = 0; j <= k; j++) addPast(svg, lights[j]);
    markCurrent(svg, lights[k]);
    svg.dataset.lit = String(i);
  };
  // While a run streams, the drawing comes once (its first frame) and each row of the
  // step table brings its step's lights (data-lit, as step_lights writes them): the rows
  // that arrived since the last frame are lit here, the drawing is never sent again.
  // (Gradio's redraw of the drawing, at its next value, drops data-live: lit from row 0.)
  const lightLive = () => {
    const svg = $(DFA_SVG);
    if (!svg || $(DFA_LIGHTS)) return;
    const rows = document.querySelectorAll("#steps tbody tr[data-lit]");
    const from = Number(svg.dataset.live || 0);
    if (rows.length <= from) return;
    let lit = null;
    for (let j = from; j < rows.length; j++) {
      try { lit = JSON.parse(rows[j].dataset.lit); } catch { return; }
      addPast(svg, lit);
    }
    markCurrent(svg, lit);
    svg.dataset.live = String(rows.length);
    requestAnimationFrame(followCurrent);
  };
  // The rules drawing of a schema's structure (#schema-structure): each step's lit groups
  // by name (a position r0s1, an arc r0a2, a rule's box r1) with their classes, as
  // grammar_page.rules_lights wrote them.
  const RULE_LIGHTS = ["current", "top", "taken", "next"];
  const lightRules = (svg, lights, i) => {
    for (const el of svg.querySelectorAll("g.node.pos, g.edge.arc, g.cluster.rule")) el.classList.remove(...RULE_LIGHTS);
    const lit = lights[Math.min(i, lights.length - 1)];
    for (const [name, classes] of Object.entries(lit)) {
      for (const el of svg.querySelectorAll(`g.${name}`)) el.classList.add(...classes.split(" "));
    }
    svg.dataset.lit = String(i);
  };
  const percent = (p, digits) => `${(p * 100).toFixed(digits)}%`;
  const code = (label, isBytes) => {
    const c = document.createElement("code");
    c.textContent = label;
    if (isBytes) { c.className = "bytes"; c.title = "bytes (hex) of a character split across tokens"; }
    return c;
  };
  const item = ([label, isBytes, p], withToken) => {
    const li = document.createElement("li");
    if (withToken) li.dataset.token = label;
    const prob = document.createElement("span");
    prob.className = "p";
    prob.textContent = percent(p, 2);
    li.append(code(label, isBytes), prob);
    return li;
  };
  const renderAllowed = (i, at = "#allowed-tokens") => {
    const root = $(`${at} .allowed-view`);
    const sets = dataOf(`${at} .allowed-data`);
    if (!root || !sets || !sets.length) return;
    const d = sets[Math.min(i, sets.length - 1)];
    const n = (x) => x.toLocaleString("en-US");
    const head = root.querySelector(".allowed-head");
    head.replaceChildren(`Step ${d.s}: ${n(d.t)} allowed`
      + (d.r !== d.t ? ` (the run allowed ${n(d.r)}: the safe end or a forced chain narrowed the pattern's set)` : "")
      + `, together ${percent(d.m, 1)} of the model's probability`);
    if (d.k) head.append(" · took ", code(d.k[0], d.k[1]));
    const list = root.querySelector(".allowed-list");
    list.dataset.step = String(i);
    list.dataset.drawn = "0";
    list.replaceChildren();
    drawMore(list, d);
    const more = d.t - d.a.length;
    root.querySelector(".more").textContent = more > 0 ? `… and ${n(more)} more, each less likely.` : "";
    const blocked = root.querySelector(".blocked-list");
    if (d.b.length) blocked.replaceChildren(...d.b.map((b) => item(b, false)));
    else { const li = document.createElement("li"); li.textContent = "none"; blocked.replaceChildren(li); }
    root.dataset.step = String(d.s);
    root.dataset.shown = String(i);
    filterAllowed(root.querySelector(".allowed-filter"));  // the search box keeps filtering
  };
  // The list shows LIST_CHUNK tokens at first (its box shows about ten), more as it is
  // scrolled: a step change lays out a few dozen rows, not 300.
  const LIST_CHUNK = 40;
  const drawMore = (list, d) => {
    const from = Number(list.dataset.drawn || 0);
    const upto = Math.min(from + LIST_CHUNK, d.a.length);
    if (from >= upto) return;
    list.append(...d.a.slice(from, upto).map((a) => item(a, true)));
    list.dataset.drawn = String(upto);
    const filter = list.closest(".allowed-view")?.querySelector(".allowed-filter");
    if (filter && filter.value) filterAllowed(filter);
  };
  const setOf = (list) => {  // the list's own run's sets (the Generate or the Grammar tab's)
    const sets = dataOf(list.closest(".allowed-view")?.querySelector(".allowed-data"));
    return sets && list.dataset.step !== undefined ? sets[Math.min(Number(list.dataset.step), sets.length - 1)] : null;
  };
  document.addEventListener("scroll", (event) => {
    const list = event.target.closest?.(".allowed-list");
    if (!list || list.scrollTop + list.clientHeight < list.scrollHeight - 40) return;
    const d = setOf(list);
    if (d) drawMore(list, d);
  }, true);
  const renderCard = (i, row, at = "#stepper .step-card", word = "state") => {
    const card = $(at);
    if (!card) return;
    const cells = row.cells;
    const part = (cls, ...nodes) => { const s = document.createElement("span"); s.className = cls; s.append(...nodes); return s; };
    const clone = (cell) => [...cell.childNodes].map((c) => c.cloneNode(true));
    card.replaceChildren(
      part("card-step", `Step ${i}`), " · ", part("card-states", `${word} ${cells[1].textContent}`), " · took ",
      part("card-token", ...clone(cells[2])), " · ", part("card-allowed", `${cells[3].textContent} allowed`),
      " · valid mass ", part("card-mass", cells[4].textContent),
      document.createElement("br"), part("card-top", "model's top: ", ...clone(cells[5])),
    );
    card.dataset.step = String(i);
  };
  const placeMarker = (i, at = "#valid-mass") => {
    const plot = $(`${at} .js-plotly-plot`);
    const layout = plot?._fullLayout;
    if (!layout || !layout.xaxis || !layout.xaxis.l2p) return;
    let marker = plot.querySelector(".step-marker");
    if (!marker) { marker = document.createElement("div"); marker.className = "step-marker"; plot.append(marker); }
    marker.style.left = `${layout._size.l + layout.xaxis.l2p(i)}px`;
    marker.style.top = `${layout._size.t}px`;
    marker.style.height = `${layout._size.h}px`;
    marker.dataset.step = String(i);
  };
  const scrollRow = (row) => {
    const box = row.closest(".html-container") || row.closest("#steps");
    if (!box) return;
    const b = box.getBoundingClientRect();
    const r = row.getBoundingClientRect();
    const head = row.closest("table")?.tHead?.getBoundingClientRect().height || 0;
    if (r.top < b.top + head) box.scrollTop -= b.top + head - r.top;
    else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
  };
  const view_step = { chosen: null };
  const paint = (i) => {
    const rows = rowsOf();
    if (!rows.length) return;
    i = Math.min(Math.max(i, 0), rows.length - 1);
    view_step.chosen = i;
    // every change first, then what needs the layout (one layout, not one per part)
    const svg = $(DFA_SVG);
    const lights = dataOf(DFA_LIGHTS);
    if (svg && lights && lights.length) lightStep(svg, lights, i);
    const structure = $("#schema-structure svg");
    const structureLights = dataOf("#schema-structure .lights");
    if (structure && structureLights && structureLights.length) lightRules(structure, structureLights, i);
    for (const r of document.querySelectorAll("#steps tbody tr.selected")) if (r !== rows[i]) r.classList.remove("selected");
    rows[i].classList.add("selected");
    for (const t of document.querySelectorAll("#output .tok.selected")) t.classList.remove("selected");
    $(`#output .tok[data-step="${i}"]`)?.classList.add("selected");
    renderCard(i, rows[i]);
    renderAllowed(i);
    placeMarker(i);
    // what needs the layout waits for the frame being drawn (a forced layout here would
    // cost a step change 40-140 ms on a busy machine)
    requestAnimationFrame(() => { followCurrent(); followStructure(); scrollRow(rows[i]); });
  };
  // what the server sent may not show the chosen step yet (a redraw, the run's last
  // frame): painted again whenever a part disagrees
  const stale = (i) => {
    const rows = rowsOf();
    if (!rows.length) return false;
    const k = Math.min(i, rows.length - 1);
    const svg = $(DFA_SVG);
    const lights = dataOf(DFA_LIGHTS);
    const root = $("#allowed-tokens .allowed-view");
    const structure = $("#schema-structure svg");
    return !rows[k].classList.contains("selected")
      || (svg && lights && svg.dataset.lit !== String(k))
      || (structure && $("#schema-structure .lights") && structure.dataset.lit !== String(k))
      || (root && $("#allowed-tokens .allowed-data") && root.dataset.shown !== String(k))
      || $("#stepper .step-card")?.dataset.step !== String(k);
  };
  const finished = () => !!$(DFA_LIGHTS) || !!$("#allowed-tokens .allowed-data");
  // the card as the page first shows it, put back when the run it spoke of is cleared (a
  // new pattern, a new run): a card that still says "Step 7" under no run is stale
  let emptyCard = null;
  const clearCard = () => {
    const card = $("#stepper .step-card");
    if (!card) return;
    if (card.dataset.step === undefined) { emptyCard ??= card.innerHTML; return; }
    if (emptyCard !== null) card.innerHTML = emptyCard; else card.replaceChildren();
    delete card.dataset.step;
  };
  // The page's one observer of the whole body (each streamed frame wakes it once):
  // the step chosen and painted, the drawing lit while a run streams, a new drawing
  // adopted (its zoom and scroll put back), a stale Skip button let go.
  const onChange = () => {
    adopt(); adoptRules(); unstaleStop();
    if (!rowsOf().length) { view_step.chosen = null; clearCard(); return; }
    if (view_step.chosen === null) {
      // a run just ended: its last step is the chosen one
      if (!finished()) return lightLive();
      const rows = rowsOf();
      if (rows.length) paint(rows.length - 1);
      return;
    }
    if (stale(view_step.chosen)) paint(view_step.chosen);
  };
  // The Step slider is the server's record of the step (a redraw keeps it): told once the
  // visitor pauses, since Gradio's slider takes 20-150 ms to follow a value.
  let tellServer = null;
  const selectStep = (i) => {
    const rows = rowsOf();
    if (!rows.length) return false;
    const k = Math.min(Math.max(i, 0), rows.length - 1);
    paint(k);
    clearTimeout(tellServer);
    tellServer = setTimeout(() => {
      const box = $("#step input[type=number]");
      if (box && Number(box.value) !== view_step.chosen) setNumber("step", view_step.chosen);
    }, 400);
    return true;
  };
  // Prev / Next / Play and the ← → keys step through the run of the tab shown: the
  // Generate tab's here (selectStep), the Grammar tab's in static/grammar.js (its
  // window.fsmvizGrammarStepper), both in the browser.
  const regexStepper = {
    count: () => rowsOf().length,
    chosen: () => view_step.chosen,
    select: selectStep,
    drawn: () => true,
  };
  const noStepper = { count: () => 0, chosen: () => null, select: () => false, drawn: () => true };
  const shownStepper = () => ($("#grammar-run")?.offsetParent ? window.fsmvizGrammarStepper || noStepper : regexStepper);
  const moveStep = (delta, stepper = shownStepper()) => {
    const count = stepper.count();
    if (!count) return false;
    const now = Math.min(stepper.chosen() ?? count - 1, count - 1);
    const next = Math.min(Math.max(now + delta, 0), count - 1);
    if (next === now) return false;
    return stepper.select(next);
  };
  let playing = null;
  const stopPlaying = () => {
    if (playing) clearInterval(playing);
    playing = null;
    for (const button of document.querySelectorAll("[data-stepper=play]")) button.textContent = "▶ Play";
  };
  const play = (button) => {
    if (playing) return stopPlaying();
    const stepper = shownStepper();
    const count = stepper.count();
    if (!count) return;
    if ((stepper.chosen() ?? count - 1) >= count - 1) stepper.select(0);
    button.textContent = "⏸ Pause";
    // each step is drawn before the next is asked for: Play never runs ahead
    playing = setInterval(() => {
      if (!stepper.drawn()) return;
      if (!moveStep(1, stepper)) stopPlaying();
    }, 700);
  };
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest("input, textarea, select, [contenteditable]");
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight" && moveStep(1)) event.preventDefault();
    if (event.key === "ArrowLeft" && moveStep(-1)) event.preventDefault();
  });
  // the slider itself (dragged, or its number typed)
  const fromSlider = (event) => {
    const input = event.target.closest("#step input");
    if (!input) return;
    const i = Number(input.value);
    if (Number.isInteger(i) && i !== view_step.chosen) paint(i);
  };
  document.addEventListener("input", fromSlider);
  document.addEventListener("change", fromSlider);
  // Generate on a wide screen: the output streams under the inputs, below the fold of a
  // 900 px screen; the page is scrolled just enough to show its first lines (the drawing's
  // column is sticky: it stays beside them)
  document.addEventListener("click", (event) => {
    if (!event.target.closest("#run") || !matchMedia("(min-width: 1000px)").matches) return;
    const head = $("#output-head");
    const below = head ? head.getBoundingClientRect().top - (innerHeight - 300) : 0;
    if (below > 0) window.scrollBy({ top: below, behavior: "smooth" });
  });
  // Generate pressed while the last run offers "Skip shadow run": until the new run's
  // first answer relabels the button "Stop", a click on it would stop the new run, not
  // skip the old one's shadow run (which the new run has ended already): it is ignored
  document.addEventListener("click", (event) => {
    const stop = $("#stop");
    if (!stop) return;
    if (event.target.closest("#run") && stop.textContent.includes("Skip shadow run")) stop.dataset.stale = "1";
    else if (event.target.closest("#stop") && stop.dataset.stale) { event.preventDefault(); event.stopImmediatePropagation(); }
  }, true);
  // ... until Gradio relabels it (the page's observer, onChange, looks)
  const unstaleStop = () => {
    const stop = $("#stop");
    if (stop?.dataset.stale && !stop.textContent.includes("Skip shadow run")) delete stop.dataset.stale;
  };
  // a new run (Generate, Apply & run, a link's run): its last step will be the chosen one
  document.addEventListener("click", (event) => {
    if (event.target.closest("#run") || event.target.closest("#diagnosis [data-fix]")) { stopPlaying(); view_step.chosen = null; }
    if (event.target.closest("#grammar-run, .grammar-example, #grammar-steps tr[data-step], #grammar-output .tok[data-step]")) stopPlaying();
  }, true);

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
  // a drawing wider (or taller) than its box says so: a shade on the side that scrolls
  const edges = (box) => {
    const v = box.closest(".dfa-view, .structure-drawing, #rules");
    if (!v) return;
    v.classList.toggle("more-left", box.scrollLeft > 2);
    v.classList.toggle("more-right", box.scrollLeft + box.clientWidth < box.scrollWidth - 2);
    v.classList.toggle("more-below", box.scrollTop + box.clientHeight < box.scrollHeight - 2);
  };
  // what the Grammar tab's stepping (static/grammar.js) paints with: the same pieces
  window.fsmvizStepping = { dataOf, lightRules, renderAllowed, renderCard, placeMarker, scrollRow, edges };
  // the structure drawing scrolls in its box (sideways on a phone, down for a large
  // schema): its top position kept in view
  const followStructure = () => {
    const box = $("#schema-structure .rules-drawing");
    const top = box?.querySelector(".node.pos.top");
    if (!top) return;
    const b = box.getBoundingClientRect();
    const r = top.getBoundingClientRect();
    if (r.left < b.left || r.right > b.right) box.scrollLeft += r.left + r.width / 2 - (b.left + b.width / 2);
    if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += r.top + r.height / 2 - (b.top + b.height / 2);
    edges(box);
  };
  const followCurrent = () => { const box = $("#dfa .dfa-scroll"); if (box) { follow(box); edges(box); } };
  const adopt = () => {
    const box = $("#dfa .dfa-scroll");
    if (!box || box.dataset.adopted) return;
    box.dataset.adopted = "1";
    apply(box);
    box.scrollLeft = view.left;
    box.scrollTop = view.top;
    follow(box);
    edges(box);
    box.addEventListener("scroll", () => { view.left = box.scrollLeft; view.top = box.scrollTop; edges(box); });
    box.addEventListener("wheel", (event) => {
      if (!event.ctrlKey && !event.metaKey) return; // plain wheel scrolls; Ctrl + wheel (or a pinch) zooms
      event.preventDefault();
      setZoom(view.zoom * (event.deltaY < 0 ? 1.2 : 1 / 1.2));
    }, { passive: false });
  };
  // the rules drawings (a schema's structure, the Grammar tab's) scroll sideways on a
  // phone: the same shades say so
  const adoptRules = () => {
    for (const box of document.querySelectorAll("#schema-structure .rules-drawing, #rules .rules-drawing")) {
      if (box.dataset.adopted) continue;
      box.dataset.adopted = "1";
      edges(box);
      box.addEventListener("scroll", () => edges(box));
    }
  };
  new MutationObserver(onChange).observe(document.body, { childList: true, subtree: true, characterData: true });

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
    // the decoding box: only what differs from its defaults (top-k 0, top-p 1, EOS, no
    // overshoot); while its accordion is closed its inputs are not in the page, and the
    // link keeps what it said
    if (field("top-k", "input")) {
      const topK = value("top-k", "input");
      if (topK && Number(topK)) params.set("top_k", topK);
      const topP = value("top-p", "input[type=number]");
      if (topP && Number(topP) < 1) params.set("top_p", topP);
      const stop = $("#stop-rule input:checked")?.value;
      if (stop && stop !== "eos") params.set("stop", stop);
      if (field("overshoot", "input[type=checkbox]")?.checked) params.set("overshoot", "1");
    } else {
      const now = new URLSearchParams(location.search);
      for (const key of ["top_k", "top_p", "stop", "overshoot"]) if (now.has(key)) params.set(key, now.get(key));
    }
    // the model menu (only when the operator configured servers): a server by its name,
    // never its address (fsmviz/app/backend.py)
    const backend = value("backend", "input");
    if (backend && backend !== "bundled model") params.set("backend", backend);
    const mode = $("#schema-mode .schema-mode");  // the Regex box holds a schema's regex
    if (mode) { params.set("schema", mode.dataset.schema); params.set("whitespace", mode.dataset.whitespace); }
    const chosen = $("#steps tbody tr.selected");
    if (chosen) { params.set("run", "1"); params.set("step", chosen.dataset.step); }
    return params;
  };
  let loaded = false;
  const updateLink = () => {
    if (!loaded || $("#grammar-run")?.offsetParent) return;  // the Grammar tab's: grammar.js
    const query = "?" + link().toString();
    if (query !== location.search) history.replaceState(null, "", query);
  };
  setInterval(updateLink, 700); // also after the server's updates (a chosen step, a run)
  document.addEventListener("input", (event) => {
    if (event.target.closest(".allowed-filter")) return filterAllowed(event.target);
    if (event.target.closest("#regex, #prompt, #max-tokens, #temperature, #seed, #prob-limit, #step, #top-k, #top-p")) updateLink();
  });
  document.addEventListener("change", (event) => {
    if (event.target.closest("#chat, #max-tokens, #temperature, #seed, #prob-limit, #step, #top-k, #top-p, #stop-rule, #overshoot")) updateLink();
  });
  const restore = new URLSearchParams(location.search);
  const ready = setInterval(() => {
    const status = $("#status")?.textContent || "";
    if (!status.includes("Model:") || !field("regex", "textarea")?.value) return;
    clearInterval(ready);
    setTimeout(() => {
      loaded = true;
      if (restore.get("run") !== "1" || restore.has("grammar")) return updateLink();
      $("#run")?.click();
      const wanted = Number(restore.get("step"));
      const chosen = setInterval(() => {
        if (!finished()) return;
        const rows = rowsOf().length;
        if (!rows) return;
        clearInterval(chosen);
        if (Number.isInteger(wanted) && wanted >= 0 && wanted < rows) selectStep(wanted);
      }, 300);
    }, 300); // let the page-load handler's values land first
  }, 200);

  function filterAllowed(input) {
    if (!input) return;
    const needle = input.value.toLowerCase();
    const list = input.closest(".allowed-view").querySelector(".allowed-list");
    const d = needle && list ? setOf(list) : null;
    if (d && Number(list.dataset.drawn) < d.a.length) {  // a search looks at all of them
      list.append(...d.a.slice(Number(list.dataset.drawn)).map((a) => item(a, true)));
      list.dataset.drawn = String(d.a.length);
    }
    for (const li of input.closest(".allowed-view").querySelectorAll(".allowed-list li")) {
      li.hidden = needle !== "" && !li.dataset.token.toLowerCase().includes(needle);
    }
  }

  // --- Apply & run: the comparison is brought into view once, when the run is over ------
  // (watched only from the click to then: an observer of every attribute of the page
  // would wake at each class the drawing's lights move while a run streams)
  let applied = 0;
  let oldComparison = undefined; // undefined: nothing to bring into view
  const comparisonShown = new MutationObserver(() => {
    if (oldComparison === undefined) return comparisonShown.disconnect();
    const shown = $("#comparison-view .comparison");
    // once the run is over: Stop hidden again may move everything below it up
    if (!shown || shown === oldComparison || !shown.offsetParent || $("#run")?.disabled) return;
    oldComparison = undefined;
    comparisonShown.disconnect();
    $("#comparison").scrollIntoView({ behavior: "smooth", block: "start" });
  });
  const awaitComparison = () => {
    oldComparison = $("#comparison-view .comparison");
    comparisonShown.observe(document.body, { childList: true, subtree: true, attributes: true });
  };

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
      if (what === "play") return play(stepper);
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
      awaitComparison();
      setText("apply-pick", JSON.stringify({ ...JSON.parse(fix.dataset.fix), n: applied }));
      return;
    }
    const row = event.target.closest("#steps tr[data-step], #output .tok[data-step]");
    if (row) { stopPlaying(); selectStep(Number(row.dataset.step)); return; }
    const finding = event.target.closest("#diagnosis [data-finding]");
    if (finding) return setNumber("finding-pick", finding.dataset.finding);
    const schemaFix = event.target.closest("#schema-findings [data-schema-fix]");
    if (schemaFix) setNumber("schema-fix-pick", schemaFix.dataset.schemaFix);
  });

  // --- the charts: each drawn once, not twice ---------------------------------------------
  // Gradio draws each figure the server sends in a new element (Plotly.react sizes it to
  // its box), then calls Plots.resize, which lays the whole figure out once more 100 ms
  // later: twice 0.1-0.3 s of the page's one thread on a quiet 2-core machine, twice 1-3 s
  // on a loaded one. The resize is done here only if the chart's box is no longer the
  // width the figure was drawn at (a window resized, a panel opened).
  const sizeOnce = (plotly) => {
    if (!plotly || plotly.fsmvizSized) return;
    plotly.fsmvizSized = true;
    const resize = plotly.Plots.resize.bind(plotly.Plots);
    plotly.Plots.resize = (gd) => {
      if (!(gd instanceof Element)) return resize(gd);
      // read after the layout of the frame being drawn: the width then forces none
      requestAnimationFrame(() => {
        const drawn = gd._fullLayout?.width;
        if (gd.isConnected && !(drawn && Math.abs(gd.clientWidth - drawn) <= 1)) resize(gd).catch(() => {});
      });
      return Promise.resolve(gd);
    };
  };
  // Plotly arrives with the first chart (Gradio sets window.Plotly then)
  if (window.Plotly) sizeOnce(window.Plotly);
  else {
    let plotly;
    Object.defineProperty(window, "Plotly", {
      configurable: true,
      get: () => plotly,
      set: (module) => { plotly = module; sizeOnce(module); },
    });
  }

  // Clicking a point of the valid-mass chart chooses that step.
  const hook = () => {
    const plot = $("#valid-mass .js-plotly-plot");
    if (plot && plot.on && !plot.dataset.fsmvizHooked) {
      plot.dataset.fsmvizHooked = "1";
      plot.on("plotly_click", (data) => { if (data.points.length) { stopPlaying(); selectStep(data.points[0].x); } });
    }
    if (plot && view_step.chosen !== null && plot.querySelector(".step-marker")?.dataset.step !== String(view_step.chosen)) placeMarker(view_step.chosen);
  };
  setInterval(hook, 500);
}
