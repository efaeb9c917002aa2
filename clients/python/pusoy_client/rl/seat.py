"""A seat's observation and mask from what it receives over gRPC, and a bot that plays
a policy on them.

``SeatEncoder`` is fed the seat's messages (``PolicyBot`` does it from the bot's hooks)
and turns each prompt into the same ``(observation, action_mask)`` the referee's
environments give (``referee.rl``; the test ``tests/rl/test_parity.py`` plays the same
matches both ways). It keeps, from the events, what no single prompt says: the seat's
dealt hand (the action index's positions) and the cards each seat has played this hand.
After a reconnect the snapshot says only which cards were played, not by whom: the cards
played while the bot was away count in "every card played" but in no seat's plane, and a
bot that missed its hand's deal numbers positions over the cards it holds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from pusoy_client.bot import Bot
from pusoy_client.prompt import Choice, Prompt, fallback
from pusoy_client.protocol import common, play_service
from pusoy_client.rl.index import NUM_ACTIONS, PASS_ACTION, HandIndex, cards_mask
from pusoy_client.rl.observation import Encoder, SeatFacts

Observation = dict[str, npt.NDArray[np.int8]]
"""``{"observation": int8[658], "action_mask": int8[1665]}``, as the environments give."""
Policy = Callable[[Observation], int]
"""A policy: an observation dict in, an action index out."""

RULE_FIELDS = (
    "suit_order",
    "direction",
    "first_lead",
    "pass_locks_out",
    "five_card_categories",
    "straights",
    "five_card_hands",
    "lowest_straight_beats_straights",
    "no_finish_on_lone_two",
    "revolution",
    "bomb",
    "teams",
    "multiplier_from",
    "match_end",
    "scoring",
    "tie_break",
)


def rule_options(rules: common.Rules) -> dict[str, Any]:
    """The option values of a ``Rules`` message by name (what ``Encoder`` reads)."""
    return {name: getattr(rules, name) for name in RULE_FIELDS}


class SeatEncoder:
    """Observations and masks of one seat, kept from its welcome, snapshots and events."""

    def __init__(self) -> None:
        self.seat = -1
        self.encoder: Encoder | None = None
        self.suit_order = "clubs-low"
        self.hand_number = 0
        self.dealt: HandIndex | None = None
        self.played = [0, 0, 0, 0]

    # -- feeding -----------------------------------------------------------------

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.seat = welcome.seat
        options = rule_options(welcome.config.rules)
        self.encoder = Encoder(options)
        self.suit_order = self.encoder.suit_order

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        st = snapshot.state
        if st.hand_number == self.hand_number and self.dealt is not None:
            return  # back within the hand: what was kept still holds
        # The hand's deal was missed: number what is known (the cards held, and the
        # seat's own plays in the current trick) and attribute the trick's plays.
        self.hand_number = st.hand_number
        self.played = [0, 0, 0, 0]
        for t in st.trick:
            if not getattr(t, "pass") and 0 <= t.seat < 4:
                self.played[t.seat] |= cards_mask(t.play.cards)
        known = cards_mask(snapshot.hand)
        if 0 <= self.seat < 4:
            known |= self.played[self.seat]
        self.dealt = HandIndex((c for c in range(52) if known >> c & 1), self.suit_order)

    def on_event(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            d = event.hand_dealt
            self.hand_number = d.hand_number
            self.played = [0, 0, 0, 0]
            for h in d.hands:
                if h.seat == self.seat:
                    self.dealt = HandIndex.from_text(h.cards, self.suit_order)
        elif kind == "played":
            p = event.played
            if 0 <= p.seat < 4:
                self.played[p.seat] |= cards_mask(p.play.cards)

    # -- reading -----------------------------------------------------------------

    def facts(self, prompt: play_service.TurnPrompt) -> SeatFacts:
        """What the seat knows at this prompt."""
        st = prompt.state
        hand = cards_mask(prompt.hand)
        if self.dealt is None or st.hand_number != self.hand_number:
            self.hand_number = st.hand_number
            self.played = [0, 0, 0, 0]
            self.dealt = HandIndex.from_text(prompt.hand, self.suit_order)
        passed = 0
        for t in st.trick:
            passed = passed | 1 << t.seat if getattr(t, "pass") else 0
        locked = 0
        for s, on in enumerate(st.locked_out):
            if on:
                locked |= 1 << s
        has_table = bool(st.table.cards)
        return SeatFacts(
            seat=prompt.seat,
            dealt=self.dealt,
            hand=hand,
            played=tuple(self.played),
            played_all=cards_mask(st.played_cards),
            counts=_four(st.card_counts),
            table=cards_mask(st.table.cards),
            table_kind=st.table.combination - 1 if has_table else -1,
            table_seat=st.table_seat if has_table and st.HasField("table_seat") else -1,
            passed=passed,
            locked=locked,
            must_include=bool(st.must_include),
            revolution=st.revolution,
            lone_two_rule=st.lone_two_rule,
            hand_number=st.hand_number,
            totals=_four(st.totals),
            hands_won=_four(st.hands_won),
        )

    def action_mask(self, prompt: play_service.TurnPrompt) -> npt.NDArray[np.int8]:
        """1 for each legal action (needs the prompt's ``legal_plays``: the default)."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        dealt = self.dealt
        if dealt is None:
            raise RuntimeError("no hand yet: feed the seat's events before its prompt")
        for play in prompt.legal_plays:
            mask[dealt.action_of(cards_mask(play.cards))] = 1
        if prompt.can_pass:
            mask[PASS_ACTION] = 1
        return mask

    def observe(self, prompt: play_service.TurnPrompt) -> Observation:
        """The observation and mask of a prompt, as the environments give them."""
        if self.encoder is None:
            raise RuntimeError("no welcome yet: feed the seat's welcome first")
        facts = self.facts(prompt)
        return {"observation": self.encoder.encode(facts), "action_mask": self.action_mask(prompt)}

    def cards(self, action: int) -> list[str] | None:
        """The cards of an action (None for the pass), to send as the answer."""
        if action == PASS_ACTION:
            return None
        if self.dealt is None:
            raise RuntimeError("no hand yet")
        return self.dealt.text_of(action)


def _four(values: Sequence[int]) -> tuple[int, int, int, int]:
    v = [*values, 0, 0, 0, 0]
    return v[0], v[1], v[2], v[3]


class PolicyBot(Bot):
    """A bot that plays a policy trained in the environments: ``act`` (or the ``policy``
    given) maps the observation dict to an action index; an index outside the mask is
    replaced by the kit's fallback, with a line on stderr.
    """

    name = "policy"

    def __init__(self, policy: Policy | None = None, name: str | None = None) -> None:
        self.encoder = SeatEncoder()
        self.policy = policy
        if name:
            self.name = name

    def act(self, observation: Observation) -> int:
        if self.policy is None:
            raise NotImplementedError("give a policy or override act()")
        return self.policy(observation)

    def choose(self, prompt: Prompt) -> Choice:
        obs = self.encoder.observe(prompt.message)
        action = int(self.act(obs))
        if not 0 <= action < NUM_ACTIONS or not obs["action_mask"][action]:
            print(
                f"{self.name}: action {action} is not legal here; playing the fallback",
                file=sys.stderr,
            )
            return fallback(prompt)
        return self.encoder.cards(action)

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.encoder.on_welcome(welcome)

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        self.encoder.on_snapshot(snapshot)

    def on_event(self, event: common.Event) -> None:
        self.encoder.on_event(event)


__all__ = ["Observation", "Policy", "PolicyBot", "SeatEncoder", "rule_options"]
