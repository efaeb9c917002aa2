"""Shared helpers of the RL tests: random play in the environments, real matches at an
in-process referee with the Python kit's bots."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pusoy_client import Prompt, run_bot
from pusoy_client.rl import PolicyBot
from referee.match.settings import MatchSettings
from referee.protocol import match_service_grpc
from referee.rules import Rules
from referee.server.app import RefereeServer

PROFILES = ("pusoy-dos", "pusoy-dos-chips", "big-two")


def random_policy(seed: int) -> Any:
    rng = random.Random(seed)

    def policy(obs: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        return int(legal[rng.randrange(len(legal))])

    return policy


class ScriptedBot(PolicyBot):
    """Plays a list of action indices in order and records every observation it made."""

    def __init__(self, actions: Sequence[int]) -> None:
        super().__init__(name="scripted")
        self.actions = list(actions)
        self.seen: list[dict[str, np.ndarray]] = []

    def act(self, observation: dict[str, np.ndarray]) -> int:
        self.seen.append(observation)
        return self.actions[len(self.seen) - 1]

    def choose(self, prompt: Prompt) -> Any:
        return super().choose(prompt)


async def play_at_referee(
    log_dir: Path,
    rules: Rules,
    seed: str,
    bots: Sequence[PolicyBot],
    *,
    batch_events: bool = False,
    drill_disconnect_after: int = 0,
) -> Path:
    """One whole match at a referee server in this process, over real gRPC; its log."""
    server = RefereeServer("127.0.0.1:0", log_dir)
    await server.start()
    try:
        settings = MatchSettings(
            rules=rules,
            seed=seed,
            turn_time_ms=30_000,
            connect_timeout_ms=30_000,
            drill_disconnect_after_prompts=drill_disconnect_after,
        )
        async with server.organiser_channel() as channel:
            stub = match_service_grpc.MatchServiceStub(channel)
            created = await stub.CreateMatch(settings.request_pb())
        await asyncio.wait_for(
            asyncio.gather(
                *(
                    run_bot(bot, server.address, token, batch_events=batch_events)
                    for bot, token in zip(bots, created.seat_tokens, strict=True)
                )
            ),
            240,
        )
        await server.registry.wait_over(created.match_id)
        return server.registry.log_path(created.match_id)
    finally:
        await server.stop(grace=0.5)
