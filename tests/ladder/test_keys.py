"""Teams' keys under attack: guessing from one address is throttled and logged (without
the secret), the right key is never locked out, and a refusal says nothing about why."""

from __future__ import annotations

import re
from typing import Any

import pytest

from referee.ladder.errors import KeyRefused, TooManyGuesses
from referee.ladder.keys import KeyGuard, new_key, parse_key
from referee.server.throttle import LimitedLog

from .conftest import Clock


class Lines:
    """Where the guard's log lines go (structlog's logger interface)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))


def guard_for(clock: Clock, limit: int = 5) -> tuple[KeyGuard, Lines]:
    lines = Lines()
    return KeyGuard(limit, clock, LimitedLog(lines, per_window=100, clock=clock)), lines


def test_new_keys_are_random_and_well_formed():
    keys = [new_key() for _ in range(200)]
    assert len({k for k, _, _ in keys}) == 200
    for key, key_id, digest in keys:
        assert re.fullmatch(r"pdl_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", key)
        assert parse_key(key) == (key_id, key.split("_", 2)[2])
        assert digest.startswith("sha256$") and key.split("_", 2)[2] not in digest


def test_guesses_from_one_address_are_throttled_and_logged_but_never_the_right_key(store, clock):
    """Past the limit a wrong key from the address is answered "wait"; the right key,
    from that address too, always opens its team (everyone behind a proxy or a tunnel
    shares an address: issue 30)."""
    real = store.create_team("alpha").key
    guard, log = guard_for(clock)
    key_id, secret = parse_key(real)
    for i in range(5):
        guess = f"pdl_{key_id}_{i:043d}"
        with pytest.raises(KeyRefused) as refused:
            guard.authenticate(store.team_by_key, guess, "10.0.0.66")
        assert not isinstance(refused.value, TooManyGuesses)
    with pytest.raises(TooManyGuesses) as throttled:
        guard.authenticate(store.team_by_key, f"pdl_{key_id}_{9:043d}", "10.0.0.66")
    assert 0 < throttled.value.retry_after <= 60
    assert guard.authenticate(store.team_by_key, real, "10.0.0.66").name == "alpha"
    assert guard.authenticate(store.team_by_key, real, "10.0.0.7").name == "alpha"
    with pytest.raises(KeyRefused) as elsewhere:  # another address's first wrong key
        guard.authenticate(store.team_by_key, f"pdl_{key_id}_{8:043d}", "10.0.0.7")
    assert not isinstance(elsewhere.value, TooManyGuesses)
    clock.advance(61)
    with pytest.raises(KeyRefused) as later:
        guard.authenticate(store.team_by_key, f"pdl_{key_id}_{7:043d}", "10.0.0.66")
    assert not isinstance(later.value, TooManyGuesses)

    refusals = [fields for event, fields in log.lines if event == "ladder key refused"]
    assert len(refusals) == 7 and {f["key_id"] for f in refusals} == {key_id}
    assert any(event == "ladder key guesses throttled" for event, _ in log.lines)
    assert secret not in repr(log.lines)
    assert (guard.refused_total, guard.throttled_total) == (7, 1)


def test_a_refusal_is_the_same_whatever_was_wrong(store):
    real = store.create_team("alpha").key
    other = store.create_team("beta").key
    messages = set()
    for wrong in (
        real[:-2] + ("zz" if real[-2:] != "zz" else "yy"),  # the right id, a wrong secret
        f"pdl_{'f' * 16}_{parse_key(real)[1]}",  # an id nobody has
        f"pdl_{parse_key(real)[0]}_{parse_key(other)[1]}",  # another team's secret
    ):
        with pytest.raises(KeyRefused) as refused:
            store.team_by_key(wrong)
        messages.add(str(refused.value))
    assert len(messages) == 1


def test_garbage_is_refused_without_logging_it(clock):
    guard, log = guard_for(clock)

    def lookup(key: str) -> Any:
        parse_key(key)
        raise AssertionError("a malformed key reached the database")

    for garbage in ("", "Bearer x", "pdl_\x1b[2J_x", "pdl_" + "a" * 5000):
        with pytest.raises(KeyRefused):
            guard.authenticate(lookup, garbage, "10.0.0.9")
    assert all(fields["key_id"] == "" for _, fields in log.lines)
