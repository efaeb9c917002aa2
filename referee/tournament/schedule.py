"""The schedule: a deterministic list of matches from a configuration and a master seed.

Matches come in *deal groups*: one seed, the same four bots, one match per seating. With
the default ``rotations`` every bot plays every seat of the same deals once, so over a
group the luck of the cards cancels; the group is rated as one result
(``referee.tournament.ratings``).

Order: round by round, table by table, seating by seating, so a tournament cut short
has played every table about equally. Group ``g`` (counted in that order from 0) has
the seed ``SHA-256(master seed + ":" + g)`` in lower-case hex (with ``deals =
"per-round"``, every table of round ``r`` plays ``SHA-256(master seed + ":" + r)``);
match ``i`` (counted from 0 over the whole schedule) has the id ``<first 8 hex digits
of the configuration hash>-<i, six digits>``. Both are recomputed identically on every
run of the same configuration, which is what makes a tournament resumable.

Remote bots cannot be sandboxed, so in a duplicate tournament they would see each deal
of their groups once per seating and could remember it. With ``remote_deals =
"unseen"``, a match with a remote bot takes instead the first deal of its round that
none of its remote bots has been dealt yet, trying the tables in turn from its own
(table + seating, cyclically): so seating 0 keeps its group's deal, and the others play
deals that other tables play as duplicates. When every deal of the round has been seen
(fewer tables than seatings, or the remote bot sits at every table), the match gets a
deal of its own, ``SHA-256("<master seed>:<group>:<seating>")``, played nowhere else.

>>> [s for s in seatings(Seatings.ROTATIONS)]
[(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
>>> group_seed("master", 0)[:16]
'03b498048f02921c'
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from itertools import permutations

from referee.tournament.config import BotKind, Deals, RemoteDeals, Seatings, TournamentConfig

Seating = tuple[int, int, int, int]
"""Which of the table's four bots sits in seats 0..3 (indexes into the table)."""

ROTATIONS: tuple[Seating, ...] = ((0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2))


@dataclasses.dataclass(frozen=True, slots=True)
class MatchSpec:
    """One match of the schedule."""

    index: int
    """Position in the schedule, from 0."""
    match_id: str
    group: int
    """The deal group: every match of a group has the same seed and the same four bots."""
    round: int
    table: int
    """Index into ``TournamentConfig.tables()``."""
    seating: int
    """Which seating of the group, from 0."""
    bots: tuple[str, str, str, str]
    """Bot names in seats 0..3."""
    seed: str


def seatings(kind: Seatings) -> tuple[Seating, ...]:
    """The seatings of one deal group."""
    if kind is Seatings.PERMUTATIONS:
        return tuple((a, b, c, d) for a, b, c, d in permutations(range(4)))
    if kind is Seatings.ROTATIONS:
        return ROTATIONS
    return ((0, 1, 2, 3),)


def group_seed(master_seed: str, group: int) -> str:
    """The seed of a deal group: SHA-256 of ``master_seed:group`` in lower-case hex."""
    return hashlib.sha256(f"{master_seed}:{group}".encode()).hexdigest()


def match_id(config_hash: str, index: int) -> str:
    return f"{config_hash[:8]}-{index:06d}"


def own_seed(master_seed: str, group: int, seating: int) -> str:
    """A deal for one match only (remote bots, when every deal of the round was seen)."""
    return hashlib.sha256(f"{master_seed}:{group}:{seating}".encode()).hexdigest()


def build_schedule(config: TournamentConfig, master_seed: str) -> list[MatchSpec]:
    """Every match of the tournament, in the order they are started."""
    return plan(
        config.tables(),
        config.rounds,
        config.seatings,
        master_seed,
        config.identity_hash(),
        remote={b.name for b in config.remote_bots if b.kind is BotKind.REMOTE},
        unseen=config.remote_deals is RemoteDeals.UNSEEN,
        per_round=config.deals is Deals.PER_ROUND,
    )


def plan(
    tables: Sequence[Sequence[str]],
    rounds: int,
    kind: Seatings,
    master_seed: str,
    config_hash: str,
    *,
    remote: set[str] | frozenset[str] = frozenset(),
    unseen: bool = False,
    per_round: bool = False,
) -> list[MatchSpec]:
    """The schedule from what defines it (``referee verify --tournament`` rebuilds it
    from a folder's tournament.json this way). ``per_round``: every table of round ``r``
    plays the deal ``SHA-256(master:r)`` (``deals = "per-round"``)."""
    orders = seatings(kind)
    specs: list[MatchSpec] = []
    seen: dict[str, set[str]] = {name: set() for name in remote}
    group = 0
    for rnd in range(rounds):
        first = group
        if per_round:
            round_seeds = [group_seed(master_seed, rnd)] * len(tables)
        else:
            round_seeds = [group_seed(master_seed, first + t) for t in range(len(tables))]
        for t, table in enumerate(tables):
            seed = round_seeds[t]
            group_orders = orders
            if kind is Seatings.NONE:
                # One match per seed: rotate the seats from group to group instead.
                group_orders = (ROTATIONS[group % 4],)
            for s, order in enumerate(group_orders):
                index = len(specs)
                bots = (table[order[0]], table[order[1]], table[order[2]], table[order[3]])
                deal = seed
                remotes = [n for n in bots if n in seen]
                if unseen and remotes:
                    n_tables = len(tables)
                    candidates = [round_seeds[(t + s + k) % n_tables] for k in range(n_tables)]
                    deal = next(
                        (c for c in candidates if all(c not in seen[n] for n in remotes)),
                        own_seed(master_seed, group, s),
                    )
                for n in remotes:
                    seen[n].add(deal)
                specs.append(
                    MatchSpec(
                        index=index,
                        match_id=match_id(config_hash, index),
                        group=group,
                        round=rnd,
                        table=t,
                        seating=s,
                        bots=bots,
                        seed=deal,
                    )
                )
            group += 1
    return specs


__all__ = [
    "ROTATIONS",
    "MatchSpec",
    "Seating",
    "build_schedule",
    "group_seed",
    "own_seed",
    "plan",
    "seatings",
]
