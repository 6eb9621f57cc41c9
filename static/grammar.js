// The Grammar tab's behaviour (fsmviz/app/grammar_page.py runs this once, when the page
// loads). Choosing a step happens here, in the browser, as on the Generate tab: a finished
// run's last frame brings every step's lights of the rules (#rules .lights), its place and
// terminal (#grammar-place .step-views: grammar_steps.py) and its allowed set
// (#grammar-allowed .allowed-data), so that a click on a row of #grammar-steps, a token of
// #grammar-output or a point of #grammar-chart, the Step slider, Prev / Play / Next and the
// ← → keys (static/app.js, through window.fsmvizGrammarStepper) change the drawing, the
// place, the terminal, the row, the token, the card, the allowed set and the chart's
// marker at once, with no server round trip; the slider follows. The rules box scrolls
// (never the page) to keep the lit position in view. While the tab is shown the address
// follows its inputs and chosen step (?grammar=…&prompt=…&run=1&step=k); opening such a
// link opens the tab (the server has put the inputs back), runs when it says run=1 and
// then chooses its step.
() => {
  if (window.__fsmvizGrammar) return;
  window.__fsmvizGrammar = true;
  const $ = (selector) => document.querySelector(selector);
  const shown = () => !!$("#grammar-run")?.offsetParent;

  // --- stepping: painted here, from what the run's last frame brought --------------------
  const paints = () => window.fsmvizStepping;  // app.js's pieces, shared with Generate
  const rows = () => document.querySelectorAll("#grammar-steps tbody tr[data-step]");
  const viewsOf = () => $("#grammar-place .step-views");
  const CARD = "#grammar-step-buttons .step-card";
  const chosen = { step: null, run: null };  // the step shown, the run (its data) it is of
  let slider = null;
  const tellSlider = () => {  // once the visitor pauses: Gradio's slider is slow to follow
    clearTimeout(slider);
    slider = setTimeout(() => {
      const input = $("#grammar-step input[type=number]");
      if (!input || chosen.step === null || Number(input.value) === chosen.step) return;
      input.value = String(chosen.step);
      input.dispatchEvent(new Event("input", { bubbles: true }));
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }, 400);
  };
  const followRules = () => {  // the lit top position in view, inside the rules' own box
    const box = $("#rules .rules-drawing");
    const top = box?.querySelector(".node.pos.top") || box?.querySelector(".node.pos.current");
    if (!top) return;
    const b = box.getBoundingClientRect();
    const r = top.getBoundingClientRect();
    if (r.left < b.left || r.right > b.right) box.scrollLeft += r.left + r.width / 2 - (b.left + b.width / 2);
    if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += r.top + r.height / 2 - (b.top + b.height / 2);
    paints().edges(box);
  };
  // the run's data parsed once, known by its digest (data-run): its attribute is not read
  // again at each step (hundreds of kB for a long run)
  let parsed = { run: null, data: null };
  const dataOf = (views) => {
    if (parsed.run !== views.dataset.run) {
      let data = null;
      try { data = JSON.parse(views.dataset.json); } catch { data = null; }
      parsed = { run: views.dataset.run, data };
    }
    return parsed.data;
  };
  const showViews = (views, i) => {  // the place and the terminal after step i
    const data = dataOf(views);
    if (!data || !data.s.length) return;
    const [p, t] = data.s[Math.min(i, data.s.length - 1)];
    const place = $("#grammar-place .place-view");
    if (place && place.dataset.piece !== String(p)) { place.innerHTML = data.p[p]; place.dataset.piece = String(p); }
    const terminal = $("#grammar-terminal .terminal-view");
    if (terminal && terminal.dataset.piece !== String(t)) { terminal.innerHTML = data.t[t]; terminal.dataset.piece = String(t); }
    views.dataset.shown = String(i);
  };
  const paint = (i) => {
    const s = paints();
    const all = rows();
    const views = viewsOf();
    if (!s || !all.length || !views) return false;
    i = Math.min(Math.max(i, 0), all.length - 1);
    chosen.step = i;
    chosen.run = views.dataset.run;
    // every change first, then what needs the layout (one layout, not one per part)
    const svg = $("#rules svg");
    const lights = s.dataOf("#rules .lights");
    if (svg && lights && lights.length) s.lightRules(svg, lights, i);
    for (const r of document.querySelectorAll("#grammar-steps tbody tr.selected")) if (r !== all[i]) r.classList.remove("selected");
    all[i].classList.add("selected");
    for (const t of document.querySelectorAll("#grammar-output .tok.selected")) t.classList.remove("selected");
    $(`#grammar-output .tok[data-step="${i}"]`)?.classList.add("selected");
    showViews(views, i);
    s.renderCard(i, all[i], CARD, "rule");
    s.renderAllowed(i, "#grammar-allowed");
    s.placeMarker(i, "#grammar-chart");
    requestAnimationFrame(() => { followRules(); s.scrollRow(all[i]); });
    tellSlider();
    return true;
  };
  const setStep = paint;
  window.fsmvizGrammarStepper = {
    count: () => (viewsOf() ? rows().length : 0),
    chosen: () => chosen.step,
    select: paint,
    drawn: () => true,
  };
  // what the server sent may not show the chosen step (the run's last frame, a redraw):
  // painted again whenever a part disagrees
  const stale = (views, i) => {
    const all = rows();
    const k = Math.min(i, all.length - 1);
    const svg = $("#rules svg");
    const root = $("#grammar-allowed .allowed-view");
    return !all[k].classList.contains("selected")
      || (svg && $("#rules .lights") && svg.dataset.lit !== String(k))
      || (root && $("#grammar-allowed .allowed-data") && root.dataset.shown !== String(k))
      || $(CARD)?.dataset.step !== String(k)
      || views.dataset.shown !== String(k);
  };
  let emptyCard = null;  // the card as the page first shows it, put back when a run is cleared
  const clearCard = () => {
    const card = $(CARD);
    if (!card) return;
    if (card.dataset.step === undefined) { emptyCard ??= card.innerHTML; return; }
    if (emptyCard !== null) card.innerHTML = emptyCard;
    delete card.dataset.step;
  };
  new MutationObserver(() => {
    const views = viewsOf();
    if (!rows().length) { chosen.step = null; chosen.run = null; clearCard(); return; }
    if (!views) return;  // a run streaming: its steps come with its last frame
    if (views.dataset.run !== chosen.run) { paint(rows().length - 1); return; }  // a run ended
    if (stale(views, chosen.step)) paint(chosen.step);
  }).observe(document.body, { childList: true, subtree: true });
  const fromSlider = (event) => {  // the slider dragged, or its number typed
    const input = event.target.closest?.("#grammar-step input");
    if (!input) return;
    const i = Number(input.value);
    if (Number.isInteger(i) && i !== chosen.step) paint(i);
  };
  document.addEventListener("input", fromSlider);
  document.addEventListener("change", fromSlider);
  document.addEventListener("click", (event) => {  // a new run: its last step is chosen
    if (event.target.closest("#grammar-run, .grammar-example")) chosen.run = null;
  }, true);
  document.addEventListener("click", (event) => {
    const row = event.target.closest("#grammar-steps tr[data-step], #grammar-output .tok[data-step]");
    if (row) { setStep(Number(row.dataset.step)); return; }
    if (event.target.closest("#grammar-copy-link")) {
      const url = location.origin + location.pathname + "?" + link().toString();
      history.replaceState(null, "", url);
      const button = $("#grammar-copy-link");
      button.dataset.url = url; // where a test (or a browser without clipboard) finds it
      const said = () => { button.textContent = "Link copied"; setTimeout(() => { button.textContent = "Copy link"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).then(said, () => { button.textContent = "Copy the address bar"; });
      else said();
    }
  });
  // A grammar pasted into the box is told apart afresh: the Format choice goes back to
  // auto (an example had set gbnf, and a pasted Lark grammar was refused with
  // "expected ::=", nothing pointing at the Format choice; issue 47, point 4).
  document.addEventListener("paste", (event) => {
    if (!event.target.closest("#grammar textarea")) return;
    const auto = $("#grammar-format input[type=radio][value=auto]");
    if (auto && !auto.checked) auto.click();
  }, true);
  setInterval(() => {  // a point of the chart chooses its step; the marker kept on a redraw
    const plot = $("#grammar-chart .js-plotly-plot");
    if (plot && plot.on && !plot.dataset.fsmvizHooked) {
      plot.dataset.fsmvizHooked = "1";
      plot.on("plotly_click", (data) => { if (data.points.length) setStep(data.points[0].x); });
    }
    if (plot && chosen.step !== null && plot.querySelector(".step-marker")?.dataset.step !== String(chosen.step)) paints()?.placeMarker(chosen.step, "#grammar-chart");
  }, 500);

  const value = (id, kind) => $(`#${id} ${kind}`)?.value ?? "";
  const link = () => {
    const params = new URLSearchParams({
      grammar: value("grammar", "textarea"),
      format: $("#grammar-format input:checked")?.value || "auto",
      prompt: value("grammar-prompt", "textarea"),
      max_tokens: value("grammar-max-tokens", "input[type=number]"),
      temperature: value("grammar-temperature", "input[type=number]"),
      seed: value("grammar-seed", "input"),
      chat: $("#grammar-chat input[type=checkbox]")?.checked ? "1" : "0",
    });
    const chosen = $("#grammar-steps tbody tr.selected");
    if (chosen) { params.set("run", "1"); params.set("step", chosen.dataset.step); }
    return params;
  };
  const restore = new URLSearchParams(location.search);
  let restoring = restore.has("grammar");
  setInterval(() => {  // the address follows the tab while it is shown
    if (restoring || !shown()) return;
    const query = "?" + link().toString();
    if (query !== location.search) history.replaceState(null, "", query);
  }, 700);
  if (!restoring) return;
  const wanted = restore.get("grammar");
  const open = setInterval(() => {
    const tab = [...document.querySelectorAll("button[role=tab]")].find((b) => b.textContent.trim() === "Grammar");
    if (!tab) return;
    if (!shown()) { tab.click(); return; }
    const status = $("#status")?.textContent || "";
    if (!status.includes("Model:") || value("grammar", "textarea") !== wanted) return;
    clearInterval(open);
    if (restore.get("run") !== "1") { restoring = false; return; }
    setTimeout(() => {
      $("#grammar-run")?.click();
      const step = Number(restore.get("step"));
      const done = setInterval(() => {
        if (!$("#grammar-allowed .allowed-data") || !viewsOf() || !$("#grammar-steps tbody tr")) return;
        clearInterval(done);
        restoring = false;
        const rows = document.querySelectorAll("#grammar-steps tbody tr").length;
        if (Number.isInteger(step) && step >= 0 && step < rows) setTimeout(() => setStep(step), 300);
      }, 300);
    }, 300);  // let the grammar's drawing land first
  }, 200);
}
