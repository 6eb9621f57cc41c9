"""``fsmviz.audit`` and ``python -m fsmviz audit``: a constraint over a file of prompts.

Most tests run on the ``tiny`` random model (fast, deterministic): each audit row is held
to a run of the same prompt made alone with ``fsmviz.generate``, so the audit's counts and
stall places are checked against what ``generate`` says, not against numbers written here.
One test audits the real vLLM server (``vllm_server``), prompts sent concurrently.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import fsmviz
from fsmviz.audit.prompts import PromptsError, file_name, prompt_pairs, read_prompts
from fsmviz.audit.rows import load_trace
from fsmviz.cli import main
from fsmviz.generation.server import ServerModel

DIGITS = r"[0-9]{2,3}(x[a-z]+)?"
LONG = r"[a-z]{30}"  # cannot finish in 4 tokens: every run is cut at max_tokens
PROMPTS = ["A number, please.", "Two digits?", "What is 6 times 7?", "Count to three."]


def csv_rows(out) -> list[dict[str, str]]:
    """runs.csv of the output folder ``out``, a mapping per row."""
    import csv

    with (out / "runs.csv").open(encoding="utf-8", newline="") as source:
        return list(csv.DictReader(source))


def expected_row(trace):
    """The stalled step as the audit defines it, from a run made alone: its last step when
    the text does not match, else its step of lowest valid mass (the first of equals)."""
    steps = trace.steps
    lowest = min(steps, key=lambda s: (s.valid_mass, s.index))
    stall = lowest if trace.matched else steps[-1]
    return trace.matched, trace.stop_reason, len(steps), stall.index, stall.state_before, lowest


@pytest.mark.parametrize("pattern,options", [(DIGITS, {}), (LONG, {"safe_end": False})])
def test_each_row_is_the_run_generate_makes_alone(tiny, pattern, options) -> None:
    report = fsmviz.audit(tiny, pattern, PROMPTS, max_tokens=4, concurrency=2, **options)
    alone = [fsmviz.generate(tiny, pattern, p, max_tokens=4, **options) for p in PROMPTS]
    assert [row.id for row in report.rows] == ["1", "2", "3", "4"]
    for row, trace in zip(report.rows, alone, strict=True):
        matched, reason, tokens, step, state, lowest = expected_row(trace)
        assert (row.matched, row.stop_reason, row.tokens) == (matched, reason, tokens)
        assert (row.stall_step, row.stall_state) == (step, state)
        assert row.lowest_mass_step == lowest.index
        assert row.lowest_mass == pytest.approx(lowest.valid_mass, abs=1e-6)
        assert row.text == trace.text and row.place == f"state {state}"
    reasons = Counter(t.stop_reason for t in alone)
    assert report.total == 4 and report.matched == sum(t.matched for t in alone)
    assert dict(report.stop_reasons) == dict(reasons)
    assert report.max_tokens == reasons["max_tokens"] and report.failed == 0
    # The places: every run counted once, those that did not match where they ended.
    assert sum(p.runs for p in report.places) == 4
    assert sum(p.stalled for p in report.places) == 4 - report.matched
    ranks = [(p.stalled, p.runs) for p in report.places]
    assert ranks == sorted(ranks, reverse=True)
    if pattern == LONG:  # state n of [a-z]{30} is after n letters: its note says so
        for place in report.places:
            n = int(place.place.removeprefix("state "))
            assert place.note == (f"after `{'a' * n}`" if n else "at the start"), place


def test_a_schema_names_the_field_where_runs_stall(tiny) -> None:
    schema = fsmviz.compile_schema(
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}},
         "required": ["name"]}, whitespace="none")  # fmt: skip
    report = fsmviz.audit(tiny, schema, PROMPTS[:2], max_tokens=6, safe_end=False)
    for row in report.rows:
        assert not row.matched and row.stop_reason == "max_tokens"
        written = row.text
        # Cut inside the name's string: the field there is /name (its key or its value).
        assert written.startswith('{"name":') and row.field == "/name", written
        assert row.place == "field /name"
    assert report.places[0].place == "field /name" and report.places[0].stalled == 2
    # the report's heat map is the schema's fields, each filled by its stalls
    assert report.structure == ("", "/name")
    from fsmviz.audit.heat import parts_heat
    from fsmviz.audit.htmlreport import report_fragment

    assert [(p, n, r) for p, n, r, _ in parts_heat(report.structure, report.rows)] == [
        ("", 0, 0), ("/name", 2, 2)]  # fmt: skip
    html = report_fragment(report, "")
    assert "on the fields" in html and ">/name</code> 2 not matched, 2 runs" in html


def test_a_grammar_names_the_rule_where_runs_stall(tiny) -> None:
    grammar = fsmviz.compile_grammar('root ::= "[" item ("," item)* "]"\nitem ::= [a-z]+\n')
    report = fsmviz.audit(tiny, grammar, PROMPTS[:2], max_tokens=3)
    for row in report.rows:
        assert row.stall_state is None  # a grammar run's state counts tokens
        assert row.rule in ("root", "item"), row
        assert row.place == f"rule {row.rule}"


def test_a_grammar_audit_ranks_rules_and_the_grammar_doctor_explains_them(tiny, tmp_path):
    grammar = fsmviz.compile_grammar('root ::= "(" list ")"\nlist ::= "a" list | "a"\n')
    report = fsmviz.audit(tiny, grammar, PROMPTS[:2], max_tokens=2, safe_end=False, out=tmp_path)
    failed = [row for row in report.rows if not row.matched]
    assert failed and all(row.rule for row in report.rows)
    assert [line["rule"] for line in csv_rows(tmp_path)] == [row.rule for row in report.rows]
    # The grammar doctor's findings, each held to the runs it says it explains: a run cut
    # at max_tokens for the budget, a run stalled in the rule a finding names otherwise.
    assert report.findings, "the shortest sentence '(a)' does not fit 2 tokens"
    for e in report.findings:
        if e.kind == "grammar_budget":
            hits = [row.id for row in failed if row.stop_reason == "max_tokens"]
        else:
            hits = [row.id for row in failed if row.rule == e.rule]
        assert e.rule is not None and f"`{e.rule}`" in e.message or e.kind == "grammar_budget"
        assert e.explains == len(hits) and list(e.examples) == hits[:5], e
    html = (tmp_path / "report.html").read_text()
    assert "What the doctor says" in html and "grammar_budget" in html
    assert f"rule {failed[0].rule}" in html
    assert report.structure == ("root", "list") and "on the rules" in html  # the heat map
    for rule in report.structure:
        stalled = sum(1 for row in failed if row.rule == rule)
        runs = sum(1 for row in report.rows if row.rule == rule)
        assert f">{rule}</code> {stalled} not matched, {runs} runs" in html


def test_the_output_folder_holds_a_trace_a_row_and_a_report_per_prompt(tiny, tmp_path) -> None:
    out = tmp_path / "out"
    prompts = [("q1", PROMPTS[0]), ("a/b <c>", PROMPTS[1])]
    report = fsmviz.audit(tiny, DIGITS, prompts, max_tokens=4, out=out)
    for row, (ident, prompt) in zip(report.rows, prompts, strict=True):
        saved = json.loads((out / row.trace_file).read_text())
        assert row.trace_file == f"traces/{file_name(ident)}"
        assert saved["prompt"] == prompt and saved["text"] == row.text  # the page's download
        assert load_trace(str(out / row.trace_file)).stop_reason == row.stop_reason
    csv = (out / "runs.csv").read_text().splitlines()
    assert csv[0].startswith("id,matched,stop_reason,tokens,stall_step") and len(csv) == 3
    html = (out / "report.html").read_text()
    assert "a/b &lt;c&gt;" in html and "<c>" not in html  # escaped
    assert html.index("Counts") < html.index("Where runs stall") < html.index("<h2>Runs")


def test_a_killed_audit_resumes_without_redoing_or_double_counting(tiny, tmp_path) -> None:
    out = tmp_path / "out"
    prompts = [(f"p{k}", f"{PROMPTS[k % 4]} ({k})") for k in range(6)]

    def killed_after_three(progress) -> None:
        if progress.done == 3:
            raise KeyboardInterrupt  # the kill: after three runs were saved

    with pytest.raises(KeyboardInterrupt):
        fsmviz.audit(tiny, DIGITS, prompts, max_tokens=3, out=out, concurrency=1,
                     progress=killed_after_three)  # fmt: skip
    saved = sorted(p.name for p in (out / "traces").glob("*.json"))
    assert saved == ["p0.json", "p1.json", "p2.json"]
    (out / "traces" / "p1.json").unlink()  # and one finished trace lost
    kept = (out / "traces" / "p0.json").stat().st_mtime_ns
    report = fsmviz.audit(tiny, DIGITS, prompts, max_tokens=3, out=out)
    assert report.resumed == 2  # p0 and p2 found done, not redone
    assert (out / "traces" / "p0.json").stat().st_mtime_ns == kept
    assert [row.id for row in report.rows] == [ident for ident, _ in prompts]
    assert report.total == 6 and sum(p.runs for p in report.places) == 6
    assert len((out / "runs.csv").read_text().splitlines()) == 7
    again = fsmviz.audit(tiny, DIGITS, prompts, max_tokens=3, out=out)
    assert again.resumed == 6 and again.rows == report.rows  # the same rows, from disk


def test_a_process_killed_midway_resumes_each_prompt_once(tiny, tmp_path) -> None:
    """The issue's target with a real kill: a forked audit (the parent's ``tiny`` model,
    no import to wait for; test_fork.py holds a model used before a fork to its child) is
    SIGKILLed by its own progress callback after three runs, with a second run in flight:
    no ``finally``, no flush. The next call with the same folder redoes none of the
    finished runs and counts every prompt exactly once."""
    import os
    import signal
    import time

    out = tmp_path / "out"
    prompts = [(f"p{k}", f"{PROMPTS[k % 4]} ({k})") for k in range(6)]

    def killed_after_three(progress) -> None:
        if progress.done == 3:
            os.kill(os.getpid(), signal.SIGKILL)

    child = os.fork()
    if child == 0:  # the audit that is killed
        try:  # the parent's model: its passes thread starts afresh in the child
            fsmviz.audit(tiny, DIGITS, prompts, max_tokens=3, out=out, concurrency=2,
                         progress=killed_after_three)  # fmt: skip
        finally:
            os._exit(3)  # not reached when the kill came
    deadline = time.monotonic() + 60
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the forked audit did not reach its third run in 60 s")
    assert os.WIFSIGNALED(ended[1]) and os.WTERMSIG(ended[1]) == signal.SIGKILL
    saved = {p.stem: p.stat().st_mtime_ns for p in (out / "traces").glob("*.json")}
    assert 3 <= len(saved) < 6, saved  # three reported, perhaps the run in flight too
    with (out / "rows.jsonl").open("a") as ledger:
        ledger.write('{"id": "p5", "matched": tr')  # and a ledger line cut by a kill
    report = fsmviz.audit(tiny, DIGITS, prompts, max_tokens=3, out=out)
    assert report.resumed == len(saved)  # found done, not redone:
    assert {p.stem: p.stat().st_mtime_ns for p in (out / "traces").glob("*.json")
            if p.stem in saved} == saved  # fmt: skip
    assert [row.id for row in report.rows] == [ident for ident, _ in prompts]
    assert report.total == 6 and sum(p.runs for p in report.places) == 6
    assert sum(n for _, n in report.stop_reasons) == 6 and report.failed == 0
    assert [line["id"] for line in csv_rows(out)] == [ident for ident, _ in prompts]
    alone = fsmviz.generate(tiny, DIGITS, prompts[5][1], max_tokens=3)
    assert (report.rows[5].text, report.rows[5].matched) == (alone.text, alone.matched)


def test_a_failed_request_is_retried_kept_with_its_message_and_tried_again(
    tiny, bundled_vocab, tmp_path
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = ServerModel("m", f"http://127.0.0.1:{port}/v1", "m", tiny.tokenizer, bundled_vocab)
    out = tmp_path / "out"
    report = fsmviz.audit(down, DIGITS, PROMPTS[:2], max_tokens=3, out=out, retries=1)
    assert report.failed == 2 and report.total == 2 and report.count("failed") == 2
    for row in report.rows:
        assert row.attempts == 2 and "nothing answers at" in row.error and not row.trace_file
    assert "nothing answers at" in (out / "report.html").read_text()
    assert not list((out / "traces").iterdir())
    again = fsmviz.audit(down, DIGITS, PROMPTS[:2], max_tokens=3, out=out, retries=0)
    assert again.resumed == 0 and again.failed == 2  # not done: tried again


def test_a_stream_that_breaks_off_is_a_failed_request_not_a_run(
    tiny, bundled_vocab, tmp_path, monkeypatch
) -> None:
    """A server too loaded to send the next token within the timeout breaks the stream
    off: the run alone keeps what was written (stop reason engine_error), but an audit
    must not count it as a run that ended there: it is retried, then kept as failed."""
    import importlib

    from fsmviz.generation.server import ServerRun

    calls: list[int] = []
    four = tiny.tokenizer.encode("4", add_special_tokens=False)

    def broken(self, prompt_ids):  # one digit written, then the stream broke off
        calls.append(1)
        self.dropped = "the server at m did not answer within 60 s"
        self.server_text = "4"
        return four, [None]

    monkeypatch.setattr(ServerRun, "_complete", broken)
    monkeypatch.setattr(ServerRun, "_scored", lambda self, ids, written: [{} for _ in written])
    monkeypatch.setattr(importlib.import_module("fsmviz.audit.run"), "BACKOFF", 0.0)
    model = ServerModel("m", "http://127.0.0.1:9/v1", "m", tiny.tokenizer, bundled_vocab)
    alone = fsmviz.generate(model, DIGITS, PROMPTS[0], max_tokens=3)
    assert alone.stop_reason == "engine_error" and alone.text == "4"  # what a run keeps
    calls.clear()
    report = fsmviz.audit(model, DIGITS, PROMPTS[:2], max_tokens=3, retries=1, out=tmp_path)
    assert len(calls) == 4 and report.failed == 2 and report.count("engine_error") == 0
    for row in report.rows:
        assert row.attempts == 2 and "did not answer within 60 s" in row.error
    assert not list((tmp_path / "traces").iterdir())  # not done: the next call tries again


def test_a_report_without_run_links_still_lists_its_runs() -> None:
    """A constraint too long for a link (a big schema) leaves the runs without an 'open'
    link: the report still lists them (it raised on the missing link before)."""
    from fsmviz.audit.htmlreport import report_fragment
    from fsmviz.audit.report import summarize
    from fsmviz.audit.rows import AuditRow
    from fsmviz.generation.trace import GenerationOptions

    rows = [AuditRow("a", "Hi", True, "accepted", field="", lowest_mass=0.5, stall_step=0)]
    report = summarize(rows, "JSON Schema (regex path)", options=GenerationOptions(), link=())
    html = report_fragment(report, "http://127.0.0.1:7860/")
    assert ">a<" in html and ">open</a>" not in html


def test_prompts_files_jsonl_and_plain_lines(tmp_path) -> None:
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(
        '{"id": "a", "prompt": "One"}\n\n{"prompt": "Two"}\n{"id": 7, "prompt": "x"}\n'
    )
    assert list(read_prompts(jsonl)) == [("a", "One"), ("3", "Two"), ("7", "x")]
    plain = tmp_path / "p.txt"
    plain.write_text("First line\r\nSecond { line\n")
    assert list(read_prompts(plain)) == [("1", "First line"), ("2", "Second { line")]
    for bad, words in [
        (['{"prompt": 3}'], 'line 1: a JSON line needs a "prompt" that is text'),
        (["ok", '{"prompt": "x"'], "line 2 starts with { but is not JSON"),
        (['{"id": "a", "prompt": "x"}', '{"id": "a", "prompt": "y"}'], "id a is used twice"),
    ]:
        with pytest.raises(PromptsError, match=words):
            list(prompt_pairs(bad, "f"))


def audit_cli(*args: str) -> int:
    return main(["audit", *args])


def test_the_command_writes_the_folder_from_either_file(tiny, tmp_path, monkeypatch, capsys):
    import fsmviz.generation.models as models

    monkeypatch.setattr(models, "load_model", lambda name=None: tiny)
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text("\n".join(json.dumps({"id": f"q{k}", "prompt": p})
                               for k, p in enumerate(PROMPTS[:3])))  # fmt: skip
    plain = tmp_path / "p.txt"
    plain.write_text("\n".join(PROMPTS[:3]) + "\n")
    for file, ids in [(jsonl, ["q0", "q1", "q2"]), (plain, ["1", "2", "3"])]:
        out = tmp_path / f"out-{file.suffix[1:]}"
        status = audit_cli("--regex", DIGITS, str(file), "--out", str(out), "--max-tokens", "3")
        captured = capsys.readouterr()
        assert status == 0, captured.err
        assert captured.out.startswith("3 runs: ")
        assert sorted(p.stem for p in (out / "traces").iterdir()) == ids
        lines = (out / "runs.csv").read_text().splitlines()
        assert [line.split(",")[0] for line in lines[1:]] == ids
        assert (out / "report.html").is_file()
        assert "audit" in captured.err  # the progress


def test_bad_input_exits_2_with_a_clear_message(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "fine"}\n{"prompt": 3}\n')
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    grammar = tmp_path / "g.gbnf"
    grammar.write_text('root ::= "a" item\n')
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "object", "properties": {"a": {"type": 3}}}')
    cases = [
        (["--regex", "[0-9]+", str(bad)], f'{bad}, line 2: a JSON line needs a "prompt"'),
        (["--regex", "[0-9]+", str(empty)], "holds no prompts"),
        (["--regex", "[0-9]+", str(tmp_path / "missing.txt")], "cannot read"),
        ([str(bad)], "give the constraint as one of --regex"),
        (["--regex", "[0-9", str(bad)], "error:"),
        (["--grammar", str(grammar), str(bad)], f"{grammar}:1:"),
        (["--schema", str(schema), str(bad)], "/properties/a"),
        (["--regex", "a", "--schema", str(schema), str(bad)], "give the constraint as one of"),
    ]
    for args, words in cases:
        assert audit_cli(*args) == 2, args
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (args, err)


def test_a_folder_made_by_another_audit_is_refused_unless_fresh(
    tiny, tmp_path, monkeypatch, capsys
) -> None:
    """Resuming into a folder made with another constraint, model or options would count
    its runs as this audit's: refused, naming what differs; ``--fresh`` starts over."""
    import fsmviz.generation.models as models
    from fsmviz.audit.folder import FolderMismatch

    out = tmp_path / "out"
    first = fsmviz.audit(tiny, DIGITS, PROMPTS[:2], max_tokens=3, out=out)
    assert json.loads((out / "audit.json").read_text())["options"]["max_tokens"] == 3
    with pytest.raises(FolderMismatch, match=r"max_tokens \(3 there, 4 here\)") as refused:
        fsmviz.audit(tiny, DIGITS, PROMPTS[:2], max_tokens=4, out=out)
    assert "the constraint" not in str(refused.value) and "--fresh" in str(refused.value)
    renamed = ServerModel("m", "http://127.0.0.1:9/v1", "other", tiny.tokenizer, tiny.vocab)
    with pytest.raises(FolderMismatch, match="the model .tiny-random there, other at"):
        fsmviz.audit(renamed, DIGITS, PROMPTS[:2], max_tokens=3, out=out)
    assert fsmviz.audit(tiny, DIGITS, PROMPTS[:2], max_tokens=3, out=out).rows == first.rows
    # the command: exit 2, the message naming the constraint; --fresh deletes and reruns
    monkeypatch.setattr(models, "load_model", lambda name=None: tiny)
    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(PROMPTS[:2]) + "\n")
    assert audit_cli("--regex", LONG, str(prompts), "--out", str(out), "--max-tokens", "3") == 2
    err = capsys.readouterr().err
    assert f"the constraint (regex {DIGITS} there, regex {LONG} here)" in err, err
    assert "new folder" in err and "Traceback" not in err
    args = ("--regex", LONG, str(prompts), "--out", str(out), "--max-tokens", "3", "--fresh")
    assert audit_cli(*args) == 0
    capsys.readouterr()
    assert json.loads((out / "audit.json").read_text())["constraint"]["label"] == f"regex {LONG}"
    alone = [fsmviz.generate(tiny, LONG, p, max_tokens=3) for p in PROMPTS[:2]]
    assert [row["text"] for row in csv_rows(out)] == [trace.text for trace in alone]


def test_concurrency_out_of_range_is_refused(tiny) -> None:
    with pytest.raises(ValueError, match="concurrency must be between 1 and"):
        fsmviz.audit(tiny, DIGITS, PROMPTS, concurrency=0)


@pytest.mark.xdist_group("test_server.py:served")  # the worker that holds the vLLM server
def test_a_server_audit_sends_prompts_concurrently_and_replays_each(vllm_server, tmp_path):
    served = fsmviz.connect(vllm_server)
    date = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    prompts = [(f"d{k}", f"On what date did event number {k} happen? Answer as YYYY-MM-DD.")
               for k in range(8)]  # fmt: skip
    report = fsmviz.audit(served, date, prompts, max_tokens=16, concurrency=8, out=tmp_path)
    assert report.total == 8 and report.failed == 0, [r.error for r in report.rows]
    assert report.analysis_seconds is not None and 0 < report.analysis_share < 1
    for row in report.rows:
        assert row.disagreements == 0 and row.tokens >= 1
        assert row.analysis_seconds is not None and row.stall_state is not None
        trace = load_trace(str(tmp_path / row.trace_file))
        assert trace.text == row.text and trace.matched == row.matched
    again = fsmviz.audit(served, date, prompts, max_tokens=16, concurrency=8, out=tmp_path)
    assert again.resumed == 8 and again.analysis_seconds == 0.0  # none analysed again
    # One prompt again, alone: the server is greedy, the same text and verdict.
    alone = fsmviz.generate(served, date, prompts[3][1], max_tokens=16)
    assert (alone.text, alone.matched) == (report.rows[3].text, report.rows[3].matched)


@pytest.mark.xdist_group("test_server.py:served")
def test_a_grammar_audit_on_the_server_names_the_rule_where_runs_stall(
    vllm_server, tmp_path, capsys
):
    """``python -m fsmviz audit --grammar FILE --server URL``: the server runs the grammar
    (vLLM's ``grammar``), fsmviz replays each run through the grammar's exact mask and names
    the rule at the stall, in runs.csv and in the report."""
    grammar = tmp_path / "answer.gbnf"
    grammar.write_text('root ::= answer "."\nanswer ::= "yes" | "no" | "maybe"\n')
    prompts = tmp_path / "p.txt"
    prompts.write_text("Is the sky blue? Answer yes or no.\nIs fire cold? Answer yes or no.\n")
    out = tmp_path / "out"
    status = audit_cli("--grammar", str(grammar), "--server", vllm_server, "--max-tokens",
                       "2", "--out", str(out), str(prompts))  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    lines = csv_rows(out)
    assert len(lines) == 2 and all(line["error"] == "" for line in lines), lines
    for line in lines:
        trace = load_trace(str(out / line["trace_file"]))
        assert line["rule"] in ("root", "answer") and line["stall_state"] == ""
        assert trace.text == line["text"] and trace.stop_reason == line["stop_reason"]
        assert int(line["disagreements"]) == 0, trace.notes
    html = (out / "report.html").read_text()
    assert f"rule {lines[0]['rule']}" in html


def test_the_report_draws_the_stalls_explains_them_and_links_each_run(tiny, tmp_path) -> None:
    import re
    from urllib.parse import parse_qs, urlsplit

    from fsmviz.audit.heat import heat_colour
    from fsmviz.audit.htmlreport import report_html

    prompts = [("p<1>", "Say <script>alert(1)</script>"), ("p2", "Letters & words " * 20)]
    report = fsmviz.audit(tiny, LONG, prompts, max_tokens=4, safe_end=False, out=tmp_path)
    html = (tmp_path / "report.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The heat map: every run that did not match is counted on the drawing once, and
    # the hottest state is filled deep red.
    counted = [int(n) for n in re.findall(r"<title>states? [0-9-]+: (\d+) runs not matched", html)]
    assert sum(counted) == report.total - report.matched == 2
    assert f'="{heat_colour(1.0)}"' in html  # a state's fill, or a folded chain's line
    # The valid-mass distribution of each place counts its runs.
    assert all(sum(p.mass_bins) == p.runs for p in report.places)
    # The doctor: [a-z]{30} cannot finish in 4 tokens; that finding explains both runs.
    budget = [e for e in report.findings if e.kind == "budget"]
    assert budget and budget[0].explains == 2 and budget[0].examples == ("p<1>", "p2")
    assert "What the doctor says" in html and "budget" in html
    # Each run linked to the page with it loaded: the whole prompt, the options, its step.
    links = re.findall(r'<a href="(http://127\.0\.0\.1:7860/\?[^"]+)"', html)
    assert len(links) == 2
    for link, row, (_, prompt) in zip(links, report.rows, prompts, strict=True):
        query = parse_qs(urlsplit(link.replace("&amp;", "&")).query)
        assert query["regex"] == [LONG] and query["prompt"] == [prompt]  # not cut at 200
        assert query["max_tokens"] == ["4"] and query["run"] == ["1"]
        assert query["step"] == [str(row.stall_step)]
    assert 'href="?regex=' in report_html(report, page="")  # on the page: the page itself
