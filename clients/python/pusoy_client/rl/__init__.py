"""Reinforcement learning with the kit: the action index, the observation encoder, and a
bot that plays a trained policy (docs/rl.md).

The referee's environments (``referee.rl``) import these, so a policy trained there acts
over gRPC on the same tensors. The encoder and the bot need numpy (``pip install
"pusoy-client[numpy]"``); the action index (``pusoy_client.rl.index``) does not, and the
rest of the kit never imports any of this.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pusoy_client.rl.index import (
    HAND_SIZE,
    NUM_ACTIONS,
    PASS_ACTION,
    HandIndex,
    action_of_positions,
    card_id,
    card_text,
    cards_mask,
    positions_of,
)

if TYPE_CHECKING:
    from pusoy_client.rl.observation import (
        KINDS,
        OBS_HIGH,
        OBS_LOW,
        OBS_SIZE,
        RULE_FEATURES,
        Encoder,
        SeatFacts,
        decode_cards,
        rule_features,
    )
    from pusoy_client.rl.seat import Observation, Policy, PolicyBot, SeatEncoder, rule_options

_WITH_NUMPY = {
    "observation": (
        "KINDS",
        "OBS_HIGH",
        "OBS_LOW",
        "OBS_SIZE",
        "RULE_FEATURES",
        "Encoder",
        "SeatFacts",
        "decode_cards",
        "rule_features",
    ),
    "seat": ("Observation", "Policy", "PolicyBot", "SeatEncoder", "rule_options"),
}
_HOME = {name: module for module, names in _WITH_NUMPY.items() for name in names}


def __getattr__(name: str) -> Any:
    """The numpy half, imported on first use (a bot without numpy still has the index)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'pusoy_client.rl' has no attribute {name!r}")
    try:
        loaded = importlib.import_module(f"pusoy_client.rl.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != "numpy":
            raise
        raise ModuleNotFoundError(
            f'pusoy_client.rl.{name} needs numpy: pip install "pusoy-client[numpy]" (from '
            'clients/python: pip install "clients/python[numpy]")',
            name="numpy",
        ) from None
    return getattr(loaded, name)


__all__ = [
    "HAND_SIZE",
    "KINDS",
    "NUM_ACTIONS",
    "OBS_HIGH",
    "OBS_LOW",
    "OBS_SIZE",
    "PASS_ACTION",
    "RULE_FEATURES",
    "Encoder",
    "HandIndex",
    "Observation",
    "Policy",
    "PolicyBot",
    "SeatEncoder",
    "SeatFacts",
    "action_of_positions",
    "card_id",
    "card_text",
    "cards_mask",
    "decode_cards",
    "positions_of",
    "rule_features",
    "rule_options",
]
