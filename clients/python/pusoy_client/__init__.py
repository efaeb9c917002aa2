"""Python starter kit for pusoy-referee bots (the contract: docs/kits.md).

Write one method, ``choose``, that turns a prompt into cards to play (or ``PASS``) before
``prompt.budget`` runs out; the runner connects, says hello with the seat token, runs the
bot's code on a worker thread of its own, sends the fallback when ``choose`` is late or
fails, answers again after a rejection and reconnects with the same token.

>>> class Lowest(Bot):
...     def choose(self, prompt):
...         return list(prompt.legal_plays[0].cards) if prompt.legal_plays else PASS
"""

from pusoy_client.bot import PASS, Bot, Choice, MatchOutcome, Outcome
from pusoy_client.lobby import LobbyRefused, LobbySummary, lobby_main, run_lobby
from pusoy_client.options import Options, UsageError
from pusoy_client.prompt import Budget, Prompt, Rejection, fallback
from pusoy_client.rules import Combo, Rules, beats, classify, sort_cards
from pusoy_client.runner import (
    BotRefused,
    Refused,
    RpcFailed,
    Unreachable,
    main,
    play,
    run,
    run_bot,
)
from pusoy_client.tracker import Tracker, TrackingBot

__all__ = [
    "PASS",
    "Bot",
    "BotRefused",
    "Budget",
    "Choice",
    "Combo",
    "LobbyRefused",
    "LobbySummary",
    "MatchOutcome",
    "Options",
    "Outcome",
    "Prompt",
    "Refused",
    "Rejection",
    "RpcFailed",
    "Rules",
    "Tracker",
    "TrackingBot",
    "Unreachable",
    "UsageError",
    "beats",
    "classify",
    "fallback",
    "lobby_main",
    "main",
    "play",
    "run",
    "run_bot",
    "run_lobby",
    "sort_cards",
]
