"""Durations for people: the one way the referee prints how long something took or will take."""

from __future__ import annotations


def format_duration(seconds: float) -> str:
    """A short duration for people.

    >>> format_duration(3725), format_duration(61), format_duration(9.4)
    ('1h02m05s', '1m01s', '9s')
    """
    whole = max(0, round(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


__all__ = ["format_duration"]
