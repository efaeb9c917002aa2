"""A worker of the ladder's queue as the later worker loop will be one, for the durability
tests: claim, "play" (a short sleep), record; again until the queue is empty.

    python ladder_worker.py DATABASE_URL NAME LEASE_S JOURNAL

It opens the store (``upgrade head``, as every ladder process does at start), says
``started NAME`` in JOURNAL, and waits for the file ``JOURNAL.go-NAME`` before its first
claim (so a test pays for the start-ups of its workers at once, not one at a time).
After each record commits it appends ``recorded <match id> NAME`` to JOURNAL and fsyncs it:
whatever a test finds there, the database must have, whenever the worker was killed. A
worker slower than its lease (a busy machine) may find its match taken over: it says
``lost <match id> NAME`` and goes on.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time

from referee.ladder.errors import LeaseLost
from referee.ladder.storage import queries
from referee.ladder.storage.records import MatchOutcome, SeatRecord
from referee.ladder.storage.store import LadderStore


def outcome(match_id: str, rng: random.Random) -> MatchOutcome:
    places = [1, 2, 3, 4]
    rng.shuffle(places)
    return MatchOutcome(
        finished=True,
        seats=tuple(
            SeatRecord(seat=s, place=p, total=10 * (p - 1), scores=(10 * (p - 1),))
            for s, p in enumerate(places)
        ),
        log_path=f"logs/{match_id}.jsonl",
        log_hash=hashlib.sha256(match_id.encode()).hexdigest(),
        hands=1,
    )


def main() -> None:
    url, name, lease_s, journal = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    store = LadderStore.open(url)
    rng = random.Random(f"{name}:{os.getpid()}")
    with open(journal, "a", encoding="utf-8") as out:
        print(f"started {name}", file=out, flush=True)
        while not os.path.exists(f"{journal}.go-{name}"):
            time.sleep(0.01)
        while True:
            claim = store.queue.claim(name, lease_s)
            if claim is None:
                # Leased matches of killed workers come back when their leases run out.
                if not queries.queue(store, limit=1):
                    break
                time.sleep(lease_s / 4)
                continue
            time.sleep(rng.uniform(0, 0.01))
            try:
                store.queue.record(claim.match_id, claim.token, outcome(claim.match_id, rng))
            except LeaseLost:  # slower than its lease: another worker took the match
                print(f"lost {claim.match_id} {name}", file=out, flush=True)
                continue
            print(f"recorded {claim.match_id} {name}", file=out, flush=True)
            os.fsync(out.fileno())
        print(f"drained {name}", file=out, flush=True)
    store.close()


if __name__ == "__main__":
    main()
