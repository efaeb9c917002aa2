"""The examples in docs/rules.md and docs/judge.md are real: rerun them and compare.

Every fenced block of docs/rules.md is an example that runs here (see doc_examples.py for
the kinds), so the rules reference cannot state an answer the engine does not give.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
from pathlib import Path

import pytest

from referee.rules.judge import judge, moves, run_lines

from .doc_examples import Block, blocks, console_examples, run_hand

DOCS = Path(__file__).resolve().parents[2] / "docs"
RULES = blocks(DOCS / "rules.md")
JUDGE = blocks(DOCS / "judge.md")

CONSOLE = [
    pytest.param(command, request, expected, id=f"{block.doc}:{line}")
    for block in RULES + JUDGE
    if block.kind == "console"
    for command, request, expected, line in console_examples(block)
]


def test_every_block_of_the_rules_reference_is_an_example_that_runs() -> None:
    kinds = [b.kind for b in RULES]
    for i, block in enumerate(RULES):
        if block.kind == "text":
            assert i > 0 and kinds[i - 1] == "python", f"{block.id}: output of no program"
        else:
            assert block.kind in ("console", "hand", "pycon", "python"), (
                f"{block.id}: a ```{block.kind} block is not run by any test"
            )


def test_judge_doc_has_examples_for_every_reason_the_judge_gives() -> None:
    reasons = {
        json.loads(expected).get("reason")
        for block in JUDGE
        if block.kind == "console"
        for _, _, expected, _ in console_examples(block)
    }
    assert {
        "unparseable_card",
        "duplicate_card",
        "empty_play",
        "card_not_in_hand",
        "not_a_combination",
        "wrong_card_count",
        "does_not_beat",
        "missing_opening_card",
        "pass_on_lead",
        "lone_two_finish",
    } <= reasons


@pytest.mark.parametrize(("command", "request_line", "expected"), CONSOLE)
def test_judge_example(command: str, request_line: str, expected: str) -> None:
    out = io.StringIO()
    run_lines(judge if command == "judge" else moves, [request_line], out)
    assert out.getvalue().rstrip("\n") == expected


@pytest.mark.parametrize("block", [b for b in RULES if b.kind == "hand"], ids=lambda b: b.id)
def test_rules_doc_scripted_hand(block: Block) -> None:
    assert run_hand(block) > 0


@pytest.mark.parametrize("block", [b for b in RULES if b.kind == "pycon"], ids=lambda b: b.id)
def test_rules_doc_python_session(block: Block) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.body, {}, block.id, block.doc, block.line - 1)
    assert test.examples, f"{block.id}: no >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    result = runner.run(test, out=out.write)
    assert result.failed == 0, out.getvalue()


@pytest.mark.parametrize(
    "index", [i for i, b in enumerate(RULES) if b.kind == "python"], ids=lambda i: RULES[i].id
)
def test_rules_doc_python_program_prints_what_the_doc_says(index: int) -> None:
    code = RULES[index].body
    following = RULES[index + 1] if index + 1 < len(RULES) else None
    assert following is not None and following.kind == "text", "the output must follow"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, RULES[index].id, "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == following.body
