"""The Grammar tab keeps nothing stale (issue 47, points 2 and 4).

Typing a broken grammar after a run kept the old output, steps and parser place, and the
doctor said "No findings: the grammar looks healthy"; after an example had set Format to
gbnf, a pasted Lark grammar was refused with nothing pointing at the Format choice. The
handler tests here are fast (a toy vocabulary); the browser tests (``e2e``) drive the real
page and each fails on the page as it was.
"""

from __future__ import annotations

import re

import pytest

from fsmviz.app.grammar_page import (
    DOCTOR_WAITS,
    GrammarEdit,
    GrammarTab,
    grammar_edit_outputs,
    grammar_view,
    on_grammar,
    on_grammar_edit,
)
from fsmviz.app.handlers import CHANGED, EMPTY_OUTPUT, Page
from fsmviz.tokens.vocab import Vocabulary

GBNF = 'root ::= "a" [ \\n]* "b"\n'
LARK = 'start: "Yes" | "No"\n'


class Models:  # what the handlers ask of the page's BackgroundModel
    def vocabulary(self) -> Vocabulary:
        return Vocabulary.from_strings(list("ab \n"))


class Trace:  # what the handler reads of the last run: the grammar it ran
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern


def tab() -> GrammarTab:
    """A tab whose components are names (the handler only uses them as keys)."""
    names = "dfa output shadow steps chart diagnosis error status trace findings step"
    page = Page(*names.split(), downloads="downloads", run="run", stop="stop", allowed="allowed")
    return GrammarTab(page, "place", "terminal")


def test_a_broken_grammar_gets_no_clean_bill_of_health() -> None:
    rules, doctor, error = on_grammar(Models(), 'root ::= "a\n', "auto", 16)
    assert error and "healthy" not in doctor and doctor == DOCTOR_WAITS


def test_a_new_grammar_clears_the_last_runs_outputs() -> None:
    page = tab()
    edit = GrammarEdit(GBNF + "# edited\n", "auto", 16, Trace(GBNF))
    updates = on_grammar_edit(page, Models(), edit)
    assert updates[page.page.output] == EMPTY_OUTPUT
    assert updates[page.page.status] == CHANGED
    assert updates[page.page.trace] is None
    assert "terminal" in updates and "place" in updates
    assert set(updates) <= set(grammar_edit_outputs(page))


def test_the_same_grammar_keeps_its_run() -> None:
    page = tab()
    updates = on_grammar_edit(page, Models(), GrammarEdit(GBNF, "auto", 16, Trace(GBNF)))
    assert set(updates) == {page.page.dfa, page.page.diagnosis, page.page.error}


def test_a_lark_grammar_under_gbnf_says_which_format_it_is() -> None:
    said = re.sub(r"<[^>]+>", " ", grammar_view(LARK, "gbnf").error)
    assert "Lark" in said and "lark" in said and "^" in said  # the line, a caret, the hint


# ------------------------------------------------------------------------- in Chromium

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

import test_e2e  # noqa: E402
from test_grammar_e2e import run_one_rule  # noqa: E402

app_url = test_e2e.app_url  # the browser tests' fixtures: one app, one Chromium
browser_type_launch_args = test_e2e.browser_type_launch_args


@pytest.mark.e2e
def test_a_broken_grammar_clears_the_run_and_a_pasted_one_sets_the_format_to_auto(
    page, app_url: str
) -> None:
    """Both points on one page load (5-6 s of Chromium's CPU each): the run's page, then
    the format set by hand and a grammar pasted over the broken one."""
    typing_a_broken_grammar_clears_the_run_in_the_page(page, app_url)
    pasting_a_grammar_sets_the_format_back_to_auto(page)


def typing_a_broken_grammar_clears_the_run_in_the_page(page, app_url: str) -> None:
    run_one_rule(page, app_url, 'root ::= "Yes" | "No"\n', "Answer yes or no.", 4)
    expect(page.locator("#grammar-output .tok")).not_to_have_count(0)
    page.fill("#grammar textarea", 'root ::= "Yes" | "No\n')  # an unclosed string
    expect(page.locator("#grammar-error")).not_to_be_empty()
    expect(page.locator("#grammar-output .tok")).to_have_count(0)
    expect(page.locator("#grammar-steps tbody tr")).to_have_count(0)
    expect(page.locator("#grammar-status")).to_contain_text("input changed")
    expect(page.locator("#grammar-doctor")).not_to_contain_text("healthy")


def pasting_a_grammar_sets_the_format_back_to_auto(page) -> None:
    page.locator("#grammar-format input[type=radio][value=gbnf]").check()
    page.locator("#grammar textarea").focus()
    page.evaluate(
        """(text) => { const box = document.querySelector('#grammar textarea');
        const data = new DataTransfer(); data.setData('text/plain', text);
        box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true}));
        box.value = text; box.dispatchEvent(new Event('input', {bubbles: true})); }""",
        LARK,
    )
    expect(page.locator("#grammar-format input[type=radio][value=auto]")).to_be_checked()
    expect(page.locator("#rules svg g.cluster")).to_have_count(1)  # compiled as Lark
    expect(page.locator("#grammar-error")).to_be_empty()
