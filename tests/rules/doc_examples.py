"""Runs the worked examples written in the docs, so that every answer a doc gives is the
engine's own.

Four kinds of fenced block are examples:

- ``console``: ``$ echo '<request>' | referee rules judge`` (or ``moves``) lines, each
  followed by the exact answer line;
- ``hand``: a scripted hand, checked move by move (the syntax is below);
- ``pycon``: an interactive Python session, run as a doctest;
- ``python`` followed by ``text``: a program and exactly what it prints.

A ``hand`` block::

    rules: pusoy-dos-chips bomb=true        profile, then option overrides
    seat 0: 3C 9D                           each seat's cards (seats not listed: none)
    leader: 0, must include 3C              who leads, and the opening card if required
    0 plays 3C -> next 3                    an action, then what must follow it
    3 passes -> next 2; locked out: 3
    2 tries 5D -> rejected card_not_in_hand

After ``->`` come checks separated by ``;``: ``next N`` (whose turn), ``trick to N``
(the trick is over and N leads), ``locked out: N, M`` or ``locked out: none``,
``revolution`` / ``no revolution``, ``forced pass``, ``lone-2 rule lapses``,
``N wins the hand``, ``scores A B C D`` (the hand's scores), ``rejected REASON``
(``tries`` lines only). Text after ``#`` is a comment. An unknown check fails the test,
so a doc cannot claim what is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.rules import (
    PASS,
    Action,
    HandState,
    IllegalActionError,
    Outcome,
    Rules,
    parse_card,
    parse_cards,
    score_hand,
)

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
COMMAND = re.compile(r"^\$ echo '(.*)' \| referee rules (judge|moves)$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    kind: str
    body: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 2  # the first line inside the fence
        out.append(Block(path.name, line, m.group(1), m.group(2)))
    return out


def console_examples(block: Block) -> Iterator[tuple[str, str, str, int]]:
    """(command, request line, expected answer, doc line) of each ``$`` line."""
    lines = block.body.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("$ "):
            continue
        m = COMMAND.match(line)
        if m is None:
            raise AssertionError(f"{block.doc}:{block.line + i}: not a judge example: {line}")
        yield m.group(2), m.group(1), lines[i + 1], block.line + i


class HandScriptError(AssertionError):
    pass


def run_hand(block: Block) -> int:
    """Play a ``hand`` block through the engine; returns the number of checks made."""
    rules: Rules | None = None
    seats = [0, 0, 0, 0]
    hand: HandState | None = None
    checks = 0
    for offset, raw in enumerate(block.body.splitlines()):
        where = f"{block.doc}:{block.line + offset}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("rules:"):
            profile, *opts = line.removeprefix("rules:").split()
            rules = Rules.for_profile(profile, dict(o.split("=", 1) for o in opts))
        elif m := re.fullmatch(r"seat (\d): (.*)", line):
            seats[int(m.group(1))] = parse_cards(m.group(2))
        elif m := re.fullmatch(r"leader: (\d)(?:, must include (\w+))?", line):
            if rules is None:
                raise HandScriptError(f"{where}: 'rules:' must come first")
            must = 1 << parse_card(m.group(2)) if m.group(2) else 0
            hand = HandState(rules, seats, int(m.group(1)), must)
            start = list(seats)
        elif m := re.fullmatch(r"(\d) (plays|passes|tries)\s*(.*?)\s*(?:->\s*(.*))?", line):
            if hand is None or rules is None:
                raise HandScriptError(f"{where}: 'leader:' must come before the actions")
            seat, verb, cards, expect = int(m.group(1)), m.group(2), m.group(3), m.group(4)
            action = PASS if verb == "passes" or cards == "pass" else Action(parse_cards(cards))
            checks += _act(where, rules, hand, start, seat, verb, action, expect or "")
        else:
            raise HandScriptError(f"{where}: cannot read {raw!r}")
    if checks == 0:
        raise HandScriptError(f"{block.id}: a hand example with nothing checked")
    return checks


def _act(
    where: str,
    rules: Rules,
    hand: HandState,
    start: list[int],
    seat: int,
    verb: str,
    action: Action,
    expect: str,
) -> int:
    items = [e.strip() for e in expect.split(";") if e.strip()]
    if verb == "tries":
        error = hand.check(seat, action)
        (item,) = items or [""]
        m = re.fullmatch(r"rejected (\w+)", item)
        if m is None:
            raise HandScriptError(f"{where}: a 'tries' line needs '-> rejected REASON'")
        if error is None or error.reason.value != m.group(1):
            got = "legal" if error is None else error.reason.value
            raise HandScriptError(f"{where}: expected rejected {m.group(1)}, got {got}")
        return 1
    try:
        outcome = hand.apply(seat, action)
    except IllegalActionError as exc:
        raise HandScriptError(f"{where}: the engine rejects it: {exc}") from None
    for item in items:
        _check(where, rules, hand, start, outcome, item)
    return len(items)


def _check(
    where: str, rules: Rules, hand: HandState, start: list[int], outcome: Outcome, item: str
) -> None:
    ok: bool
    if m := re.fullmatch(r"next (\d)", item):
        ok = not outcome.trick_cleared and hand.turn == int(m.group(1))
    elif m := re.fullmatch(r"trick to (\d)", item):
        ok = outcome.trick_cleared and hand.turn == int(m.group(1))
    elif m := re.fullmatch(r"locked out: (none|[\d, ]+)", item):
        want = set() if m.group(1) == "none" else {int(s) for s in m.group(1).split(",")}
        ok = {s for s in range(4) if hand.locked[s]} == want
    elif item in ("revolution", "no revolution"):
        ok = hand.revolution is (item == "revolution")
    elif item == "forced pass":
        ok = outcome.forced_lead_pass
    elif item == "lone-2 rule lapses":
        ok = rules.no_finish_on_lone_two and not hand.lone_two_rule
    elif m := re.fullmatch(r"(\d) wins the hand", item):
        ok = outcome.hand_over and hand.winner == int(m.group(1))
    elif m := re.fullmatch(r"scores (-?\d+) (-?\d+) (-?\d+) (-?\d+)", item):
        if hand.winner is None:
            raise HandScriptError(f"{where}: 'scores' before the hand is over")
        want_scores = tuple(int(g) for g in m.groups())
        ok = score_hand(rules, hand.hands, hand.winner) == want_scores
    else:
        raise HandScriptError(f"{where}: unknown check {item!r}")
    if not ok:
        raise HandScriptError(f"{where}: '{item}' does not hold ({hand.describe()})")
