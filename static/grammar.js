// The Grammar tab's behaviour (fsmviz/app/grammar_page.py runs this once, when the page
// loads). Choosing a step happens on the server (the Step slider's change redraws the
// place, the row, the token, the point and the allowed set): here a click on a row of
// #grammar-steps, a token of #grammar-output or a point of #grammar-chart sets the
// slider. While the tab is shown the address follows its inputs and chosen step
// (?grammar=…&prompt=…&run=1&step=k); opening such a link opens the tab (the server has
// put the inputs back), runs when it says run=1 and then chooses its step.
() => {
  if (window.__fsmvizGrammar) return;
  window.__fsmvizGrammar = true;
  const $ = (selector) => document.querySelector(selector);
  const shown = () => !!$("#grammar-run")?.offsetParent;
  const setStep = (i) => {
    const input = $("#grammar-step input[type=number]");
    if (!input || input.disabled) return;
    input.value = String(i);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
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
  setInterval(() => {  // a point of the chart chooses its step
    const plot = $("#grammar-chart .js-plotly-plot");
    if (plot && plot.on && !plot.dataset.fsmvizHooked) {
      plot.dataset.fsmvizHooked = "1";
      plot.on("plotly_click", (data) => { if (data.points.length) setStep(data.points[0].x); });
    }
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
        if (!$("#grammar-allowed .allowed-data") || !$("#grammar-steps tbody tr")) return;
        clearInterval(done);
        restoring = false;
        const rows = document.querySelectorAll("#grammar-steps tbody tr").length;
        if (Number.isInteger(step) && step >= 0 && step < rows) setTimeout(() => setStep(step), 300);
      }, 300);
    }, 300);  // let the grammar's drawing land first
  }, 200);
}
