"""The rule-based expert: an anchor written from published Big Two heuristics.

The heuristics are those of Sugiyanto, Fernando and Tai, "A Rule-Based AI Method for an
Agent Playing Big Two" (Applied Sciences 11(9), 4206, 2021), in our own formulation and
on this engine's exact rules (so any profile or option):

- **Classify the hand** into combinations that shed it in the fewest plays
  (``partition``): five-card hands, then triples, pairs and singles by rank.
- **A winning line** within a few moves: a combination nobody can beat (a *boss*, judged
  from the cards not seen yet and how many each opponent holds) wins its trick, so when
  every group but at most one is a boss, the boss groups are played first and the hand
  goes out.
- **Cards left to each opponent**: when one is close to going out, lead what it cannot
  follow (no single against one card), block a single with the strongest single, and
  shed the most cards while the chance of winning is low.
- **Holding control**: do not spend a boss (a 2, say) to beat a low play early; do not
  break a combination to answer a play unless the hand is nearly out or an opponent is.
- Otherwise lead the group that sheds the most cards (the weakest of those), keeping
  bosses for later, and answer with the play that leaves the hand in the fewest groups
  (the weakest such): against plain opponents, passing to keep a combination whole
  loses more than breaking it (measured on the engine while writing it).

Pure and deterministic: a decision depends on the position alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from referee.bots.position import Position
from referee.rules import Combination, Context, LegalPlays, context_for
from referee.rules.combos import RANK_MASKS

MAX_FIVES = 40
"""Five-card plays tried when classifying a hand (the weakest first): enough for any
hand's useful ones, a bound on the time a strange hand takes."""
BOSS_FIVE_UNSEEN = 16
"""Whether a five-card play can be beaten is listed out only when this few cards are
unseen (every five of 39 cards would take milliseconds); before, it is assumed it can."""
DANGER = 2
"""An opponent with this many cards or fewer may go out at its next play."""
HOLD_ABOVE = 6
HOLD_BELOW = 4 * 8
"""A boss single is held back (a pass) rather than spent on a single below a jack (card
id 32) while the hand has more than ``HOLD_ABOVE`` cards and nobody is close to out."""


def _ranks(mask: int) -> Iterable[int]:
    for r in range(13):
        group = mask & RANK_MASKS[r]
        if group:
            yield group


def _by_rank(mask: int) -> list[int]:
    """Triples, pairs and singles of one rank each; four of a kind as two pairs."""
    out: list[int] = []
    for group in _ranks(mask):
        if group.bit_count() == 4:
            low = group & -group
            second = (group ^ low) & -(group ^ low)
            out += [low | second, group ^ low ^ second]
        else:
            out.append(group)
    return out


@functools.lru_cache(maxsize=4096)
def partition(ctx: Context, hand: int) -> tuple[int, ...]:
    """The hand as disjoint plays that shed it in the fewest plays (then with the fewest
    singles, then the strongest five-card plays), weakest group first."""
    fives = [m for m in LegalPlays(ctx, hand).masks if m.bit_count() == 5][:MAX_FIVES]
    best: tuple[tuple[int, int, int], list[int]] | None = None

    def consider(chosen: list[int]) -> None:
        nonlocal best
        rest = hand
        for f in chosen:
            rest &= ~f
        groups = chosen + _by_rank(rest)
        singles = sum(g.bit_count() == 1 for g in groups)
        strength = sum(_key(ctx, f) for f in chosen)
        cost = (len(groups), singles, -strength)
        if best is None or cost < best[0]:
            best = (cost, groups)

    consider([])
    for i, f in enumerate(fives):
        consider([f])
        for g in fives[i + 1 :]:
            if not f & g:
                consider([f, g])
    assert best is not None
    return tuple(sorted(best[1], key=lambda g: _order(ctx, g)))


def _combo(ctx: Context, mask: int) -> Combination:
    combo = ctx.classify(mask)
    assert combo is not None, "a group is always a play"
    return combo


def _key(ctx: Context, mask: int) -> int:
    return _combo(ctx, mask).key


def _lowest(ctx: Context, mask: int) -> int:
    """The single key of a play's weakest card."""
    return min(ctx.single_key[c] for c in range(52) if mask >> c & 1)


def _order(ctx: Context, mask: int) -> tuple[int, int]:
    """Weakest first by its weakest card; more cards first on ties."""
    return _lowest(ctx, mask), -mask.bit_count()


def is_boss(ctx: Context, play: int, unseen: int, most_held: int) -> bool:
    """Nobody can beat ``play``: no play of the unseen cards beats it, or no opponent
    holds enough cards to make one (``most_held``: the most any opponent holds)."""
    size = play.bit_count()
    if most_held < size:
        return True
    if size == 5 and unseen.bit_count() > BOSS_FIVE_UNSEEN:
        return False
    combo = _combo(ctx, play)
    if size == 1:
        top = max((ctx.single_key[c] for c in range(52) if unseen >> c & 1), default=-1)
        return top < combo.key
    return not LegalPlays(ctx, unseen, combo).masks


class Expert:
    """The expert's decision at one position: a play (a mask) or None to pass."""

    def __init__(self, pos: Position) -> None:
        self.pos = pos
        self.ctx = context_for(pos.rules, pos.revolution)
        others = [s for s in range(4) if s != pos.seat]
        self.most_held = max(pos.counts[s] for s in others)
        self.fewest = min(pos.counts[s] for s in others)
        self.legal = set(pos.plays)

    def boss(self, play: int) -> bool:
        return is_boss(self.ctx, play, self.pos.unseen, self.most_held)

    def open_groups(self, hand: int) -> list[int]:
        """The groups of ``hand`` that somebody could still beat."""
        return [g for g in partition(self.ctx, hand) if not self.boss(g)]

    def choose(self) -> int | None:
        pos = self.pos
        plays = pos.plays
        if not plays:
            return None
        for p in plays:
            if p == pos.hand:
                return p  # out at once
        line = self.winning_line()
        if line is not None:
            return line
        return self.lead() if pos.is_lead else self.answer()

    def winning_line(self) -> int | None:
        """A boss play after which at most one group can still be beaten."""
        hand = self.pos.hand
        bosses = [p for p in self.pos.plays if self.boss(p)]
        for p in sorted(bosses, key=lambda m: -m.bit_count()):
            if len(self.open_groups(hand & ~p)) <= 1:
                return p
        return None

    def lead(self) -> int:
        pos, ctx = self.pos, self.ctx
        groups = [g for g in partition(ctx, pos.hand) if g in self.legal]
        if pos.must_include:
            with_card = [g for g in groups if g & pos.must_include]
            if with_card:
                return with_card[0]
            # The opening card's group cannot be led as it is: the play with it that
            # leaves the rest in the fewest groups.
            return min(
                pos.plays,
                key=lambda p: (len(partition(ctx, pos.hand & ~p)), -p.bit_count(), _key(ctx, p)),
            )
        if not groups:
            return pos.plays[0]
        if self.fewest <= DANGER:
            multi = [g for g in groups if g.bit_count() > self.fewest]
            if multi:  # what the opponent about to go out cannot follow; the most cards
                return max(multi, key=lambda g: (g.bit_count(), -_order(ctx, g)[0]))
            singles = [p for p in pos.plays if p.bit_count() == 1]
            if singles:
                return singles[-1]  # the strongest single blocks
        weak = [g for g in groups if not self.boss(g)] or groups
        return min(weak, key=lambda g: (-g.bit_count(), _order(ctx, g)))

    def answer(self) -> int | None:
        pos, ctx = self.pos, self.ctx
        hand = pos.hand
        if self.fewest == 1 and pos.table.bit_count() == 1:
            return pos.plays[-1]  # block the opponent about to go out: the strongest single
        # The play that leaves the hand in the fewest groups; the weakest such.
        best = min(pos.plays, key=lambda p: len(partition(ctx, hand & ~p)))
        if (
            best.bit_count() == 1
            and self.fewest > DANGER
            and hand.bit_count() > HOLD_ABOVE
            and pos.table.bit_length() - 1 < HOLD_BELOW
            and self.boss(best)
        ):
            return None  # hold control: no boss spent on a low single early
        return best


def expert_pick(pos: Position) -> int | None:
    """The expert's play at ``pos`` (a mask), or None to pass."""
    choice = Expert(pos).choose()
    if choice is None and not pos.can_pass:
        return pos.plays[0]
    return choice
