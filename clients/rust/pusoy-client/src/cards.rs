//! Card notation helpers: a card is two characters, rank then suit, e.g. "3C", "TD", "2S".

/// Ranks from lowest to highest (T is ten).
pub const RANKS: [char; 13] = [
    '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A', '2',
];

/// Suits: clubs, spades, hearts, diamonds.
pub const SUITS: [char; 4] = ['C', 'S', 'H', 'D'];

/// The 52 cards, rank by rank.
pub fn deck() -> impl Iterator<Item = String> {
    RANKS
        .iter()
        .flat_map(|rank| SUITS.iter().map(move |suit| format!("{rank}{suit}")))
}

/// Whether `hand` holds `card` (notation compared without regard to case).
pub fn holds(hand: &[String], card: &str) -> bool {
    hand.iter().any(|held| held.eq_ignore_ascii_case(card))
}

/// The first card of the deck that is not in `hand` (a hand never holds all 52).
pub fn card_not_in_hand(hand: &[String]) -> String {
    deck()
        .find(|card| !holds(hand, card))
        .expect("a hand holds at most 13 of 52 cards")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_has_52_distinct_cards() {
        let cards: std::collections::HashSet<String> = deck().collect();
        assert_eq!(cards.len(), 52);
        assert!(cards.contains("TD") && cards.contains("2S") && cards.contains("3C"));
    }

    #[test]
    fn finds_a_card_the_hand_lacks() {
        let hand: Vec<String> = ["3C", "3S", "3H", "4D"].map(String::from).to_vec();
        assert_eq!(card_not_in_hand(&hand), "3D");
        let lower: Vec<String> = ["3c", "3s"].map(String::from).to_vec();
        assert_eq!(card_not_in_hand(&lower), "3H");
        assert!(holds(&lower, "3C"));
    }
}
