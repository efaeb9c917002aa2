"""Reinforcement learning on the referee's exact rules (docs/rl.md): a PettingZoo AEC
environment (``env``, ``raw_env``), a Gymnasium single-seat environment registered as
``pusoy/Seat-v0``, a vectorised form (``TableVector``), and ``referee dataset``.

An optional extra: ``pip install "pusoy-referee[rl]"`` (numpy, gymnasium, pettingzoo,
pyarrow) and the Python kit with numpy (``pip install "clients/python[numpy]"``), whose
encoder and action index the environments use. The referee imports none of this.
"""

from __future__ import annotations

from typing import Any

from referee.extras import install_hint

EXTRA_HINT = f"the rl extra is needed: {install_hint('rl')} (./scripts/setup installs both)"

try:
    import gymnasium
    import numpy  # noqa: F401

    import pusoy_client.rl.observation  # noqa: F401
except ModuleNotFoundError as _exc:  # pragma: no cover - shown to a user without the extra
    raise ModuleNotFoundError(
        f"referee.rl: {_exc.name} is missing; {EXTRA_HINT}", name=_exc.name
    ) from None

from referee.rl.game import Game, IllegalAction, reward_sign  # noqa: E402  (after the check)

SEAT_ENV_ID = "pusoy/Seat-v0"

if SEAT_ENV_ID not in gymnasium.registry:
    gymnasium.register(id=SEAT_ENV_ID, entry_point="referee.rl.seat:SeatEnv")


def __getattr__(name: str) -> Any:
    """The environments, imported on first use (``referee dataset`` needs none of them)."""
    if name in ("env", "raw_env"):
        from referee.rl import aec

        return getattr(aec, name)
    if name in ("SeatEnv", "OpponentPool"):
        from referee.rl import seat

        return getattr(seat, name)
    if name == "TableVector":
        from referee.rl.vector import TableVector

        return TableVector
    raise AttributeError(f"module 'referee.rl' has no attribute {name!r}")


__all__ = [
    "SEAT_ENV_ID",
    "Game",
    "IllegalAction",
    "OpponentPool",
    "SeatEnv",
    "TableVector",
    "env",
    "raw_env",
    "reward_sign",
]
