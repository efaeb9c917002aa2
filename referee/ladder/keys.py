"""Teams' API keys: made with ``secrets``, shown once, kept as a hash, compared in constant
time, guesses throttled and logged.

A key reads ``pdl_<id>_<secret>``: ``id`` is 8 random bytes in hex, the key's public
name (it finds the team's row through a unique index, and names the key in logs without
giving it away); ``secret`` is 32 random bytes (``secrets.token_urlsafe``). The database
keeps ``sha256$`` and the hex SHA-256 of a domain tag, the id and the secret.

Why a plain, fast hash: a slow password hash (bcrypt, scrypt, Argon2) exists to make
guessing a *low-entropy* secret from its hash expensive; a 256-bit random secret cannot be
guessed from its hash at any speed, so a slow hash would only make every request cost
the server tens of milliseconds of CPU, a lever for anyone who can send requests. A salt
exists to defeat precomputed tables and to make equal passwords hash differently; the
id, unique per key, plays that part (and binds a hash to its row: a hash copied to
another team's row matches no key). No server-side secret (pepper) is mixed in: the
database alone is then a complete backup, and a leaked database still gives away no key.

Throttling counts refused keys per client address (``referee.server.throttle``'s
sliding window, the same as the gRPC server's failed hellos), never per key id: a key id
is public, and a limit on it would let anyone lock a team out. It holds back failures
only: past the limit a wrong key is answered "wait" instead of "wrong", but a right key
is always let in. Many clients share an address (everyone behind the web's TLS proxy
unless it is a trusted one, every remote bot through the lobby's SSH tunnel), and a
limit on every key from an address would let one stranger lock every team out.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from typing import TypeVar

from referee.ladder.errors import KeyRefused, TooManyGuesses
from referee.server.throttle import LimitedLog, WindowCounter, limited_log

PREFIX = "pdl"
_SCHEME = "sha256$"
_DOMAIN = b"pusoy-ladder-key-v1\x00"
_KEY = re.compile(r"pdl_([0-9a-f]{16})_([A-Za-z0-9_-]{43})")
_KEY_ID = re.compile(r"pdl_([0-9a-f]{16})_")
T = TypeVar("T")
MAX_KEY_CHARS = 128
"""Anything longer is refused before it is looked at."""


def new_key() -> tuple[str, str, str]:
    """A fresh key: (the key to show once, its id, its hash to store)."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"{PREFIX}_{key_id}_{secret}", key_id, key_hash(key_id, secret)


def key_hash(key_id: str, secret: str) -> str:
    digest = hashlib.sha256(_DOMAIN + key_id.encode() + b"\x00" + secret.encode()).hexdigest()
    return _SCHEME + digest


def parse_key(text: str) -> tuple[str, str]:
    """A presented key's (id, secret); KeyRefused when it is not of a key's form.

    >>> parse_key("pdl_0123456789abcdef_" + "A" * 43)[0]
    '0123456789abcdef'
    >>> parse_key("pdl_0123456789abcdef_short")
    Traceback (most recent call last):
    ...
    referee.ladder.errors.KeyRefused: not a ladder API key (pdl_<16 hex>_<43 characters>)
    """
    m = _KEY.fullmatch(text.strip()) if len(text) <= MAX_KEY_CHARS else None
    if m is None:
        raise KeyRefused("not a ladder API key (pdl_<16 hex>_<43 characters>)")
    return m.group(1), m.group(2)


def matches(stored: str | None, key_id: str, secret: str) -> bool:
    """Whether a presented secret is the one ``stored`` is the hash of, in constant time
    (also when there is no stored hash: an unknown id costs what a known one does)."""
    presented = key_hash(key_id, secret)
    expected = stored if stored is not None else _SCHEME + "0" * 64
    return hmac.compare_digest(presented.encode(), expected.encode()) and stored is not None


class KeyGuard:
    """Refused keys per client address: the first ``failures_per_minute`` are answered
    ``KeyRefused``, the next ones ``TooManyGuesses`` (wait) until the window moves on;
    a right key is let in whatever the address did (module docstring). Each refusal is
    logged, at a bounded rate per address."""

    def __init__(
        self,
        failures_per_minute: int = 10,
        clock: Callable[[], float] = time.monotonic,
        log: LimitedLog | None = None,
    ) -> None:
        self.failures = WindowCounter(failures_per_minute, 60.0, clock)
        self.log = log or limited_log("referee.ladder.keys")
        self.refused_total = 0
        """Wrong keys answered as wrong."""
        self.throttled_total = 0
        """Wrong keys answered "wait", their address over its limit."""

    def authenticate(self, lookup: Callable[[str], T], key: str, address: str) -> T:
        """``lookup(key)`` (``LadderStore.team_by_key``, a constant-time comparison),
        its refusals counted and logged: KeyRefused, or TooManyGuesses past the limit."""
        try:
            return lookup(key)
        except KeyRefused as exc:
            m = _KEY_ID.match(key)
            self.refused(address, exc, m.group(1) if m else "")
            raise

    def refused(self, address: str, error: KeyRefused, key_id: str = "") -> None:
        """Count and log one refused key (its public id when it has one, never more of
        it); TooManyGuesses when ``address`` is past its limit."""
        if not self.failures.hit(address):
            self.throttled_total += 1
            wait = self.failures.retry_after(address)
            self.log.warning(address, "ladder key guesses throttled", address=address)
            raise TooManyGuesses(f"too many refused keys from {address}; wait {wait:.0f} s", wait)
        self.refused_total += 1
        self.log.warning(
            address,
            "ladder key refused",
            address=address,
            key_id=key_id,
            why=str(error),
        )
