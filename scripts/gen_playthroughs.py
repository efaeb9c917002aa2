#!/usr/bin/env python3
"""Write the golden playthroughs: tests/rules/playthroughs/<name>.txt.

Each file is one hand played from a fixed seed by a seeded random player that, at every
turn, picks uniformly among the legal plays, a pass included when a pass is legal. At
every step the file shows whose turn it is, what each seat sees, every legal play and
whether a pass is legal, and the action taken; at the end, the hand's result and scores.
tests/rules/test_playthroughs.py regenerates them in memory and diffs, so any change of
behaviour in the engine shows up as a readable diff. Run from the repository root:

    .venv/bin/python scripts/gen_playthroughs.py           # rewrite every file
    .venv/bin/python scripts/gen_playthroughs.py --check   # exit 1 if any file is stale
    .venv/bin/python scripts/gen_playthroughs.py --search pusoy-dos-chips-4
        # print a seed number under which the spec's required events happen

For each profile, files 1 to 3 are hands 1 to 3 of one match (so hands 2 and 3 show who
leads after the first hand). The other files are the first hand of a match with house
rules, on a seed chosen so that the rule matters (a revolution, a bomb, a forced pass):
the generator refuses to write a file whose required events did not happen.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.rules import (
    PASS,
    Action,
    HandResult,
    HandState,
    Kind,
    MatchState,
    Outcome,
    Rules,
    Scoring,
    SeatView,
    deal,
    format_cards,
)

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "rules" / "playthroughs"
WIDTH = 96

# Events a spec may require: a four of a kind turned the ranks over; a four of a kind
# was played as a bomb on a play of another size; a leader whose last card is a 2 had
# to pass; the forced passes went round and the restriction lapsed.
EVENTS = ("revolution", "bomb", "forced_lead_pass", "lone_two_lapsed")


@dataclasses.dataclass(frozen=True)
class Spec:
    """One playthrough file: which match, which of its hands, what must happen in it."""

    name: str
    profile: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    hand_number: int = 1
    seed_number: int = 0
    requires: tuple[str, ...] = ()

    @property
    def seed(self) -> str:
        """The match seed: the base profile's three files share one match."""
        base = self.profile if not self.options else self.name
        return f"playthrough/{base}/{self.seed_number}"

    def rules(self) -> Rules:
        return Rules.for_profile(self.profile, self.options)


SPECS: tuple[Spec, ...] = (
    Spec("pusoy-dos-1", "pusoy-dos", hand_number=1),
    Spec("pusoy-dos-2", "pusoy-dos", hand_number=2),
    Spec("pusoy-dos-3", "pusoy-dos", hand_number=3),
    Spec("pusoy-dos-4", "pusoy-dos", {"teams": True}, seed_number=0),
    Spec(
        "pusoy-dos-5",
        "pusoy-dos",
        {"no_finish_on_lone_two": True},
        seed_number=873,
        requires=("forced_lead_pass",),
    ),
    Spec("pusoy-dos-chips-1", "pusoy-dos-chips", hand_number=1),
    Spec("pusoy-dos-chips-2", "pusoy-dos-chips", hand_number=2),
    Spec("pusoy-dos-chips-3", "pusoy-dos-chips", hand_number=3),
    Spec(
        "pusoy-dos-chips-4",
        "pusoy-dos-chips",
        {"revolution": True, "bomb": True},
        seed_number=9,
        requires=("revolution", "bomb"),
    ),
    Spec("pusoy-dos-chips-5", "pusoy-dos-chips", {"teams": True}, seed_number=0),
    Spec("big-two-1", "big-two", hand_number=1),
    Spec("big-two-2", "big-two", hand_number=2),
    Spec("big-two-3", "big-two", hand_number=3),
    Spec("big-two-4", "big-two", {"bomb": True}, seed_number=1, requires=("bomb",)),
    Spec(
        "big-two-5",
        "big-two",
        {"five_card_hands": False, "multiplier_from": 8},
        seed_number=0,
    ),
)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str = "") -> None:
        self.lines.append(text.rstrip())

    def wrapped(self, prefix: str, items: list[str], sep: str = " | ") -> None:
        """Items on as few lines as fit ``WIDTH``, never splitting one item."""
        if not items:
            self.line(prefix + "(none)")
            return
        indent = " " * len(prefix)
        current = prefix + items[0]
        for item in items[1:]:
            if len(current) + len(sep) + len(item) > WIDTH:
                self.line(current + sep.rstrip())
                current = indent + item
            else:
                current += sep + item
        self.line(current)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _choose(rng: random.Random, hs: HandState) -> Action:
    """A uniform choice among the legal plays, and the pass when it is legal."""
    plays = hs.legal_plays()
    options = list(plays.masks)
    if plays.can_pass:
        options.append(0)
    return Action(rng.choice(options)) if options else PASS


def _seat_list(seats: tuple[int, ...] | list[int]) -> str:
    return ", ".join(str(s) for s in seats) if seats else "none"


def _render_state(w: _Writer, rules: Rules, hs: HandState) -> None:
    order = rules.suit_order
    views: list[SeatView] = [hs.view(s) for s in range(4)]
    public = views[0]
    if public.table:
        kind = public.table_kind.value if public.table_kind else "?"
        w.line(f"  table: {format_cards(public.table, order)} ({kind}) by seat {public.table_seat}")
    else:
        w.line("  table: empty (a fresh lead)")
    counts = "  ".join(f"{s}:{n}" for s, n in enumerate(public.card_counts))
    notes = []
    locked = [s for s in range(4) if public.locked_out[s]]
    if rules.pass_locks_out:
        notes.append(f"locked out: {_seat_list(locked)}")
    if rules.revolution:
        notes.append(f"revolution: {'on' if public.revolution else 'off'}")
    if public.must_include:
        notes.append(f"must include: {format_cards(public.must_include, order)}")
    if rules.no_finish_on_lone_two:
        notes.append(f"lone-two rule: {'in force' if public.lone_two_rule else 'lapsed'}")
    w.line(f"  counts: {counts}" + ("   " + "   ".join(notes) if notes else ""))
    for view in views:
        w.line(f"  seat {view.seat} sees own hand: {format_cards(view.hand, order) or '-'}")


def _describe_outcome(rules: Rules, outcome: Outcome, table_before: int) -> list[str]:
    order = rules.suit_order
    seat = outcome.seat
    notes: list[str] = []
    if outcome.action.is_pass:
        text = f"seat {seat} passes"
        if outcome.forced_lead_pass:
            text += " (forced: leading a lone 2 to go out is not allowed)"
        elif rules.pass_locks_out:
            text += " and is locked out until the next lead"
        notes.append(text)
    else:
        kind = outcome.kind.value if outcome.kind else "?"
        played = format_cards(outcome.action.cards, order)
        text = f"seat {seat} plays {played} ({kind})"
        if (
            rules.bomb
            and outcome.kind is Kind.FOUR_OF_A_KIND
            and table_before
            and table_before.bit_count() != 5
        ):
            text += " as a bomb"
        notes.append(text)
    if outcome.revolution:
        notes.append("revolution: every rank comparison is turned over")
    if outcome.hand_over:
        notes.append(f"seat {seat} has no cards left: the hand is over")
    elif outcome.trick_cleared:
        notes.append(f"trick over: seat {outcome.next_seat} leads a fresh trick")
    return notes


def _render_result(w: _Writer, rules: Rules, match: MatchState, result: HandResult) -> None:
    order = rules.suit_order
    chips = rules.scoring is Scoring.CHIPS
    w.line(f"hand {result.hand_number} result: seat {result.winner} went out")
    if rules.teams:
        team = "0+2" if result.winner % 2 == 0 else "1+3"
        w.line(f"  team {team} wins the hand")
    for s in range(4):
        left = result.cards_left[s]
        cards = format_cards(left, order) or "-"
        score = f"{result.scores[s]:+d}" if chips else str(result.scores[s])
        w.line(
            f"  seat {s}: {left.bit_count():2d} left  score {score:>4}  "
            f"total {result.totals[s]:>4}  cards: {cards}"
        )
    if rules.teams:
        for a, b in ((0, 2), (1, 3)):
            w.line(
                f"  team {a}+{b}: score {result.scores[a] + result.scores[b]}  "
                f"total {result.totals[a] + result.totals[b]}"
            )
    if match.over:
        w.line("match over; standings:")
        for st in match.standings():
            seats = "+".join(str(s) for s in st.seats)
            w.line(
                f"  place {st.place}: seat{'s' if len(st.seats) > 1 else ''} {seats}  "
                f"total {st.total}  hands won {st.hands_won}"
            )
    else:
        w.line(f"match goes on (hands played: {match.hand_number})")


def _play_hand(
    match: MatchState, seed: str, number: int, rng: random.Random, w: _Writer | None
) -> tuple[HandResult, set[str]]:
    """Play hand ``number`` of ``match``, writing it to ``w`` when given."""
    rules = match.rules
    hs = match.start_hand(deal(seed, number))
    events: set[str] = set()
    order = rules.suit_order
    if w is not None:
        w.line(f"hand {number}: dealt from seed {seed!r}, hand number {number}")
        for s in range(4):
            w.line(f"  seat {s} is dealt: {format_cards(hs.hands[s], order)}")
        if hs.must_include:
            w.line(
                f"seat {hs.turn} holds {format_cards(hs.must_include, order)} and leads; "
                "the first play must contain it"
            )
        else:
            w.line(f"seat {hs.turn} won the previous hand and leads with any play")
        w.line(f"totals before this hand: {' '.join(str(t) for t in match.totals)}")
    step = 0
    result: HandResult | None = None
    while result is None:
        step += 1
        seat = hs.turn
        assert seat is not None
        plays = hs.legal_plays()
        texts = plays.texts()
        table_before = hs.table.mask if hs.table else 0
        lone_two_before = hs.lone_two_rule
        if w is not None:
            w.line()
            w.line(f"step {step}: seat {seat} to act")
            _render_state(w, rules, hs)
            w.wrapped(f"  legal plays ({len(texts)}): ", texts)
            w.line(f"  can pass: {'yes' if plays.can_pass else 'no'}")
        action = _choose(rng, hs)
        outcome, result = match.apply(seat, action)
        if outcome.revolution:
            events.add("revolution")
        if outcome.forced_lead_pass:
            events.add("forced_lead_pass")
        if lone_two_before and not hs.lone_two_rule:
            events.add("lone_two_lapsed")
        if (
            outcome.kind is Kind.FOUR_OF_A_KIND
            and rules.bomb
            and table_before
            and table_before.bit_count() != 5
        ):
            events.add("bomb")
        if w is not None:
            for note in _describe_outcome(rules, outcome, table_before):
                w.line(f"  -> {note}")
    if w is not None:
        w.line()
        _render_result(w, rules, match, result)
    return result, events


def _value_text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _header(w: _Writer, spec: Spec, rules: Rules) -> None:
    w.line(f"playthrough {spec.name}: profile {spec.profile}")
    if spec.options:
        changed = ", ".join(f"{k}={_value_text(v)}" for k, v in spec.options.items())
        w.line(f"house rules: {changed}")
    w.line("generated by scripts/gen_playthroughs.py; do not edit by hand")
    w.line(
        "each turn the player picks uniformly at random among the legal plays (and the "
        "pass, when legal)"
    )
    w.line("cards are in canonical text, ascending in card order under the profile's suit order")
    w.line("options in force:")
    for name, value in rules.options().items():
        w.line(f"  {name} = {_value_text(value)}")
    w.line()


def play(spec: Spec, *, write: bool = True) -> tuple[str, set[str]]:
    """The text of one playthrough and the events that happened in its hand."""
    rules = spec.rules()
    match = MatchState(rules)
    w = _Writer()
    _header(w, spec, rules)
    events: set[str] = set()
    for number in range(1, spec.hand_number + 1):
        if match.over:
            raise RuntimeError(f"{spec.name}: the match ended before hand {spec.hand_number}")
        rng = random.Random(f"{spec.seed}/choices/{number}")
        target = number == spec.hand_number
        _, events = _play_hand(match, spec.seed, number, rng, w if target and write else None)
    return w.text(), events


def render(spec: Spec) -> str:
    """The exact text of a playthrough file; raises if its required events did not happen."""
    text, events = play(spec)
    missing = [e for e in spec.requires if e not in events]
    if missing:
        raise RuntimeError(
            f"{spec.name}: seed number {spec.seed_number} does not produce {', '.join(missing)}; "
            f"run scripts/gen_playthroughs.py --search {spec.name}"
        )
    return text


def render_all() -> dict[str, str]:
    """Every playthrough file: its name (``<profile>-<n>.txt``) and exact text."""
    return {f"{spec.name}.txt": render(spec) for spec in SPECS}


def search(spec: Spec, limit: int = 10_000) -> Iterator[int]:
    """Seed numbers under which the spec's required events happen."""
    for n in range(limit):
        candidate = dataclasses.replace(spec, seed_number=n)
        _, events = play(candidate, write=False)
        if all(e in events for e in spec.requires):
            yield n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write tests/rules/playthroughs/*.txt.")
    parser.add_argument("--check", action="store_true", help="only check the files are current")
    parser.add_argument("--search", metavar="NAME", help="find seed numbers for one spec")
    args = parser.parse_args(argv)
    if args.search:
        spec = next((s for s in SPECS if s.name == args.search), None)
        if spec is None:
            parser.error(f"no spec {args.search!r}")
        for n, _ in zip(search(spec), range(5), strict=False):
            print(f"{spec.name}: seed_number={n}")
        return 0
    files = render_all()
    if args.check:
        stale = [
            name
            for name, text in files.items()
            if not (OUT_DIR / name).exists() or (OUT_DIR / name).read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"stale: tests/rules/playthroughs/{name}")
        return 1 if stale else 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (OUT_DIR / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} playthroughs to {OUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
