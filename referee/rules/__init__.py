"""The rules engine: pure, deterministic, no I/O. Everything else is built on it.

>>> from referee.rules import Rules, parse_cards, context_for
>>> ctx = context_for(Rules.for_profile("big-two"))
>>> ctx.beats(ctx.classify(parse_cards("9S 9D")), ctx.classify(parse_cards("9H 9C")))
True
"""

from referee.rules.cards import (
    HAND_SIZE,
    Card,
    CardSet,
    SuitOrder,
    card_text,
    format_cards,
    parse_card,
    parse_cards,
    sorted_cards,
)
from referee.rules.combos import Combination, Context, Kind, context_for
from referee.rules.deal import deal, new_seed, seed_commitment, shuffled_deck
from referee.rules.errors import (
    IllegalActionError,
    InvalidCardsError,
    OptionsError,
    Reason,
    RulesError,
)
from referee.rules.hand import PASS, SEATS, Action, HandState, Outcome, SeatView
from referee.rules.moves import LegalPlays
from referee.rules.options import (
    OPTION_NAMES,
    PROFILES,
    Direction,
    FirstLead,
    FiveCardCategories,
    MatchEnd,
    Rules,
    Scoring,
    Straights,
    TieBreak,
)
from referee.rules.scoring import Standing, card_cost, score_hand, standings
from referee.rules.series import HandResult, MatchState

__all__ = [
    "HAND_SIZE",
    "OPTION_NAMES",
    "PASS",
    "PROFILES",
    "SEATS",
    "Action",
    "Card",
    "CardSet",
    "Combination",
    "Context",
    "Direction",
    "FirstLead",
    "FiveCardCategories",
    "HandResult",
    "HandState",
    "IllegalActionError",
    "InvalidCardsError",
    "Kind",
    "LegalPlays",
    "MatchEnd",
    "MatchState",
    "OptionsError",
    "Outcome",
    "Reason",
    "Rules",
    "RulesError",
    "Scoring",
    "SeatView",
    "Standing",
    "Straights",
    "SuitOrder",
    "TieBreak",
    "card_cost",
    "card_text",
    "context_for",
    "deal",
    "format_cards",
    "new_seed",
    "parse_card",
    "parse_cards",
    "score_hand",
    "seed_commitment",
    "shuffled_deck",
    "sorted_cards",
    "standings",
]
