"""Python starter kit for pusoy-referee bots.

Write one method, ``choose``, that turns a prompt into cards to play (or ``PASS``); the
runner connects, says hello with the seat token, answers prompts before their
deadline, retries after a rejection and reconnects with the same token after a
dropped connection.

>>> class Lowest(Bot):
...     def choose(self, prompt):
...         return list(prompt.legal_plays[0].cards) if prompt.legal_plays else PASS
"""

from pusoy_client.bot import PASS, Bot, Choice, MatchOutcome
from pusoy_client.lobby import LobbyRefused, LobbySummary, lobby_main, run_lobby
from pusoy_client.runner import BotRefused, main, run, run_bot

__all__ = [
    "PASS",
    "Bot",
    "BotRefused",
    "Choice",
    "LobbyRefused",
    "LobbySummary",
    "MatchOutcome",
    "lobby_main",
    "main",
    "run",
    "run_bot",
    "run_lobby",
]
