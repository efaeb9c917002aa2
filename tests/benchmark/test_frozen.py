"""Frozen means frozen: every anchor of the current pool still makes, on the pool's
fixed positions, exactly the decisions it made when the pool was frozen."""

from __future__ import annotations

from referee.benchmark.frozen import decisions, fixed_positions
from referee.benchmark.pool import load_pool


def test_each_anchor_decides_as_when_the_pool_was_frozen():
    pool = load_pool()
    frozen = {a.name: a.decisions for a in pool.anchors}
    assert decisions(pool) == frozen, (
        "an anchor decides otherwise than pool v1 froze: that is a new pool version "
        "(a new pool file, ratings and deal set), not a change to v1"
    )


def test_the_positions_are_fixed_and_varied():
    pool = load_pool()
    positions = list(fixed_positions(pool))
    assert len(positions) == pool.positions
    again = [p for p, _, _ in fixed_positions(pool)]
    assert again == [p for p, _, _ in positions]
    assert sum(p.is_lead for p, _, _ in positions) > 20
    assert len({p.hand.bit_count() for p, _, _ in positions}) > 8
