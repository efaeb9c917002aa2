"""A built-in strategy at a seat, over gRPC through the seat client (``referee.client.seat``).

Deliberately small: the strategies answer at once, so there is no worker, no deadline
cut-off and no hooks. Bot authors use their language's starter kit instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from referee.bots.strategies import Choice, Strategy
from referee.client.seat import RECONNECT_WINDOW_S, SeatClient, SeatOutcome, SeatPlayer
from referee.client.tls import ClientTls
from referee.protocol import play_service


def _action(turn_id: int, choice: Choice) -> play_service.Action:
    action = play_service.Action(turn_id=turn_id)
    if choice:
        action.play.cards.extend(choice)
    else:
        getattr(action, "pass").SetInParent()
    return action


def _fallback(prompt: play_service.TurnPrompt) -> Choice:
    if prompt.can_pass or not prompt.legal_plays:
        return None
    return list(prompt.legal_plays[0].cards)


class StrategyPlayer(SeatPlayer):
    """Answers each prompt with the strategy's choice, and a rejected answer with the
    first legal play (or a pass) while attempts are left."""

    def __init__(self, bot: Strategy) -> None:
        self.bot = bot
        self.name = bot.name
        self.prompt: play_service.TurnPrompt | None = None

    async def on_message(self, seat: SeatClient, message: play_service.PlayResponse) -> None:
        observe = getattr(self.bot, "observe", None)
        if observe is not None:  # a strategy that keeps what it hears (the anchors)
            observe(message)
        kind = message.WhichOneof("kind")
        if kind == "prompt":
            prompt = message.prompt
            self.prompt = prompt
            choice = self.bot.choose(prompt)
            if inspect.isawaitable(choice):
                choice = await choice  # a slow strategy holds up its own seat only
            await seat.send(_action(prompt.turn_id, choice))
        elif kind == "result":
            res, last = message.result, self.prompt
            if (
                not res.accepted
                and last is not None
                and res.turn_id == last.turn_id
                and res.attempts_left > 0
            ):
                await seat.send(_action(last.turn_id, _fallback(last)))


async def play_seat(
    bot: Strategy | SeatPlayer,
    address: str,
    token: str,
    *,
    tls: ClientTls | None = None,
    channel_options: Sequence[tuple[str, str | int]] = (),
    reconnect_window_s: float = RECONNECT_WINDOW_S,
    batch_events: bool = False,
) -> SeatOutcome:
    """Play the seat of ``token`` with ``bot`` (a strategy, or any player: the house's
    model seat is one) until the match ends.

    ``tls``: TLS to the referee (None: plaintext); ``channel_options``: grpc's. Raises
    what ``SeatClient.play`` raises: SeatRefused for a refusal that retrying cannot mend,
    ConnectionError after a whole reconnect window without a word from the referee.
    """
    player = bot if isinstance(bot, SeatPlayer) else StrategyPlayer(bot)
    seat = SeatClient(
        address,
        token,
        tls=tls,
        channel_options=channel_options,
        name=player.name,
        batch_events=batch_events,
        reconnect_window_s=reconnect_window_s,
    )
    return await seat.play(player)
