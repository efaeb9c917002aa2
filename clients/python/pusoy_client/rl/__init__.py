"""Reinforcement learning with the kit: the action index, the observation encoder, and a
bot that plays a trained policy (docs/rl.md).

The referee's environments (``referee.rl``) import these, so a policy trained there acts
over gRPC on the same tensors. Needs numpy (``pip install "clients/python[numpy]"``);
``pusoy_client.rl.index`` alone does not, and the rest of the kit never imports this.
"""

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

try:
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
except ModuleNotFoundError as exc:  # pragma: no cover - shown to a user without numpy
    if exc.name != "numpy":
        raise
    raise ModuleNotFoundError(
        'pusoy_client.rl needs numpy: pip install "pusoy-client[numpy]" (from clients/python: '
        'pip install "clients/python[numpy]")',
        name="numpy",
    ) from None

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
