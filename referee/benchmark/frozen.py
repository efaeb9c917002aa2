"""Frozen means frozen: each anchor's decisions on a fixed set of positions, hashed.

The positions come from hands dealt from the pool's ``positions_seed`` (hand ``k`` is
``deal("<positions_seed>:<k>", 1)``) and played out by the engine's uniform random
choice (seeded with the hand's number, so the positions depend on no anchor); every
position where the seat to act has a choice is kept, in order, until there are
``positions`` of them. Each anchor decides at each of them (the search at the first
``search_positions``, being slow), and the SHA-256 of its decisions (the play's card
mask, or ``-`` for a pass, one a line) is its fingerprint, kept in the pool's file.
``tests/benchmark/test_frozen.py`` recomputes them: an anchor that now decides
otherwise anywhere is a new pool version, not the same one.

The random anchor's fingerprint is of its choices at those positions with the seed 0,
drawn in order: what it does with its seed, which the table gives it per match.
Needs the ``rl`` extra (the environments' ``Game`` gives the policy its observations).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from referee.benchmark.pool import Pool
from referee.bots.expert import expert_pick
from referee.bots.position import Position, from_hand
from referee.bots.search import search_pick
from referee.bots.strategies import greedy_pick
from referee.rl.game import Game
from referee.rules import deal, sorted_cards

SEARCH_POSITIONS = 24
"""The search decides at the first this many positions only (a few seconds)."""

Fixed = tuple[Position, npt.NDArray[np.int8], npt.NDArray[np.int8]]
"""A position, and the seat's observation and action mask there."""


def fixed_positions(pool: Pool) -> Iterator[Fixed]:
    """The pool's positions, in order."""
    game = Game(pool.rules, auto_deal=False)
    found = 0
    k = 0
    while found < pool.positions:
        game.reset(f"{pool.positions_seed}:{k}")
        game.start_hand(deal(f"{pool.positions_seed}:{k}", 1))
        rng = random.Random(k)
        k += 1
        while game.hand is not None and game.to_act is not None and not game.hand.is_over:
            seat = game.to_act
            actions = game.legal_actions()
            if len(actions) > 1:
                pos = from_hand(game.hand, game.played_all, game.match.hand_number)
                yield pos, game.observe(seat), game.action_mask()
                found += 1
                if found >= pool.positions:
                    return
            result = game.step_at(rng.randrange(len(actions)))
            if result is not None:
                break


def _greedy(pos: Position) -> int | None:
    """``GreedyBot``'s rule (its lowest card is the first of the prompt's sorted hand)."""
    lowest = sorted_cards(pos.hand, pos.rules.suit_order)[0]
    return greedy_pick(
        list(pos.plays), pos.is_lead, size=int.bit_count, has_lowest=lambda m: bool(m >> lowest & 1)
    )


def _line(play: int | None) -> str:
    return "-" if play is None else str(play)


def decisions(pool: Pool, names: list[str] | None = None) -> dict[str, str]:
    """Each anchor's fingerprint (SHA-256 hex) on the pool's positions."""
    names = names or [a.name for a in pool.anchors]
    lines: dict[str, list[str]] = {n: [] for n in names}
    rng = random.Random(0)
    net = None
    if "policy" in names:
        from referee.bots.policy import anchor_net

        net = anchor_net()
    for i, (pos, obs, mask) in enumerate(fixed_positions(pool)):
        options: list[int | None] = [*pos.plays, *([None] if pos.can_pass else [])]
        for name in names:
            if name == "random":
                lines[name].append(_line(rng.choice(options)))
            elif name == "greedy":
                lines[name].append(_line(_greedy(pos)))
            elif name == "expert":
                lines[name].append(_line(expert_pick(pos)))
            elif name == "search":
                if i < SEARCH_POSITIONS:
                    lines[name].append(_line(search_pick(pos)))
            elif name == "policy":
                assert net is not None
                action = net.best(obs, mask)
                lines[name].append(str(action))
            else:
                raise ValueError(f"no anchor {name!r}")
    return {n: hashlib.sha256("\n".join(v).encode()).hexdigest() for n, v in lines.items()}
