"""The compare view's engine (``fsmviz.generation.compare``) on the tiny random model:
every way runs on the same prompt and seed, and each row says honestly what it got."""

from __future__ import annotations

import pytest
import regex

from fsmviz.generation.compare import WAYS, compare, extract
from fsmviz.generation.generate import GenerationOptions, generate

PATTERN = r"[a-z]+"


@pytest.fixture(scope="module")
def rows(tiny):
    opts = GenerationOptions(max_tokens=6, chat=False, seed=3)
    return {row.way.name: row for row in compare(tiny, PATTERN, "x", opts, retries=2)}


def test_every_way_gives_one_row(rows) -> None:
    assert list(rows) == [way.name for way in WAYS]


def test_masked_rows_match_and_carry_their_curves(rows) -> None:
    for name in ("constrained", "overshoot", "first"):
        row = rows[name]
        assert row.matched and regex.fullmatch(PATTERN, row.output), name
        assert len(row.steps) == row.tokens > 0
    assert rows["first"].stop_reason == "first_match" and rows["first"].tokens == 1


def test_the_constrained_row_is_todays_run(tiny, rows) -> None:
    trace = generate(tiny, PATTERN, "x", max_tokens=6, chat=False, seed=3)
    assert rows["constrained"].output == trace.text


def test_extraction_is_the_first_search_hit_of_the_free_run(tiny, rows) -> None:
    free = generate(tiny, None, "x", max_tokens=6, chat=False, seed=3)
    row = rows["extract"]
    assert row.raw == free.text and row.tokens == len(free.steps) and not row.steps
    hit = regex.search(PATTERN, free.text, flags=regex.ASCII)
    assert row.output == (hit.group() if hit else "")
    assert row.matched == (hit is not None)


def test_retries_count_every_try(rows) -> None:
    row = rows["retries"]
    assert 1 <= row.attempts <= 3
    assert row.tokens >= rows["extract"].tokens
    assert row.matched == bool(row.output) and (
        not row.matched or regex.fullmatch(PATTERN, row.output)
    )


def test_unknown_ways_and_retries_are_refused(tiny) -> None:
    with pytest.raises(ValueError, match="unknown decoding"):
        next(compare(tiny, PATTERN, "x", ways=["beam"]))
    with pytest.raises(ValueError, match="retries"):
        next(compare(tiny, PATTERN, "x", retries=99))


def test_extract_finds_the_number_in_a_chatty_answer() -> None:
    assert extract(r"[0-9]+\.[0-9]+", "It costs about 3.50 euros.") == "3.50"
    assert extract(r"[0-9]+\.[0-9]+", "No number here") is None


def test_the_compare_table_escapes_and_marks_each_row(rows) -> None:
    from dataclasses import replace

    from fsmviz.html.compare import compare_figure, compare_html

    shown = [replace(r, output=r.output + "<b>") for r in rows.values()]
    table = compare_html(shown, ["still running"])
    assert table.count("&lt;b&gt;") >= len(shown) and "<b>" not in table
    assert table.count("data-way=") == 5 and 'class="pending"' in table
    assert len(compare_figure(list(rows.values())).data) == 3  # the masked runs' curves


def test_the_page_streams_a_row_per_way_then_the_chart(tiny) -> None:
    from fsmviz.app.compare_page import CompareInputs, on_compare

    class Ready:  # the page's BackgroundModel, with the tiny model already loaded
        def get(self, timeout: float):
            return tiny

    ways = ["constrained", "first", "extract"]
    updates = list(on_compare(Ready(), CompareInputs(PATTERN, "x", 4, 0.0, 3, False, 1, ways)))
    tables = [table for table, _, _ in updates]
    assert tables[0].count('class="pending"') == 3
    assert tables[-1].count("data-way=") == 3 and 'class="pending"' not in tables[-1]
    assert updates[-1][1] is not None and len(updates[-1][1].data) == 2
    assert "choose a server" in updates[-1][2]  # the engine check: a server's, not this one's
    none = list(on_compare(Ready(), CompareInputs(PATTERN, "x", 4, 0.0, 3, False, 1, [])))
    assert "choose at least one" in none[0][0]


def test_the_chart_says_what_will_appear_there_before_anything_runs() -> None:
    """Issue 47's walk: the Compare tab showed empty axes before a run. The chart's first
    value, its value while the ways run, and its value when no masked way ran each say in
    words what the chart is for (no model: the first update comes before any decoding)."""
    import gradio as gr

    from fsmviz.app.compare_page import CompareInputs, build_compare_tab, on_compare
    from fsmviz.html.compare import CHART_BEFORE, compare_figure

    with gr.Blocks() as page:
        build_compare_tab(None, gr.Textbox(), gr.Textbox())
    chart = next(b for b in page.blocks.values() if b.elem_id == "compare-chart")
    before = chart.value["plot"] if isinstance(chart.value, dict) else str(chart.value)
    assert "valid mass" in before and "Press Compare" in before
    assert '"data": []' in before.replace("\\", "") or '"data":[]' in before.replace(" ", "")

    class Ready:  # the page's BackgroundModel: the first update needs no model call
        def get(self, timeout: float):
            return object()

    asked = CompareInputs(PATTERN, "x", 4, 0.0, 3, False, 1, ["constrained"])
    waiting = next(iter(on_compare(Ready(), asked)))[1]
    assert not waiting.data and "once every way has run" in waiting.layout.annotations[0].text
    empty = compare_figure([])
    assert not empty.data and "only the masked ways" in empty.layout.annotations[0].text
    assert CHART_BEFORE not in empty.layout.annotations[0].text
