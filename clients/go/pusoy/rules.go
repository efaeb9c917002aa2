package pusoy

import (
	"fmt"
	"slices"
	"strings"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// Rules are the options that decide what beats what (from Welcome.Config.Rules). The
// comparator gives the same answers as the referee's engine (docs/rules.md), checked
// against the reference judge's verdicts in clients/conformance/judge_cases.jsonl.
type Rules struct {
	SuitOrder                    string // "clubs-low" or "diamonds-low"
	Straights                    string // "wrap-high", "wrap-low" or "none-with-two"
	FiveCardCategories           string // "ranked" or "locked"
	FiveCardHands                bool
	LowestStraightBeatsStraights bool
	Bomb                         bool
}

// DefaultRules are pusoy-dos's.
var DefaultRules = Rules{SuitOrder: "clubs-low", Straights: "wrap-high", FiveCardCategories: "ranked", FiveCardHands: true}

// RulesFrom reads the rules of a Welcome's configuration.
func RulesFrom(m *refereev1.Rules) Rules {
	r := DefaultRules
	if m == nil {
		return r
	}
	if m.GetSuitOrder() != "" {
		r.SuitOrder = m.GetSuitOrder()
	}
	if m.GetStraights() != "" {
		r.Straights = m.GetStraights()
	}
	if m.GetFiveCardCategories() != "" {
		r.FiveCardCategories = m.GetFiveCardCategories()
	}
	r.FiveCardHands = m.GetFiveCardHands()
	r.LowestStraightBeatsStraights = m.GetLowestStraightBeatsStraights()
	r.Bomb = m.GetBomb()
	return r
}

const (
	ranks = "3456789TJQKA2"
	suits = "CSHD"
	shift = 1 << 20 // five-card keys: category*shift + key within the category
)

var suitRanks = map[string][4]int{"clubs-low": {0, 1, 2, 3}, "diamonds-low": {1, 3, 2, 0}}

// ParseCard reads a card such as "9S", "10h" or "2♠" into its rank (0..12, 3 to 2)
// and suit (0..3, C S H D).
func ParseCard(text string) (rank, suit int, err error) {
	t := strings.NewReplacer("10", "T", "♣", "C", "♠", "S", "♥", "H", "♦", "D").Replace(strings.ToUpper(strings.TrimSpace(text)))
	if len(t) != 2 || !strings.ContainsRune(ranks, rune(t[0])) || !strings.ContainsRune(suits, rune(t[1])) {
		return 0, 0, fmt.Errorf("not a card: %q", text)
	}
	return strings.IndexByte(ranks, t[0]), strings.IndexByte(suits, t[1]), nil
}

// CardKey is a card's strength under the rules (larger is stronger).
func (r Rules) CardKey(card string, revolution bool) int {
	rank, suit, err := ParseCard(card)
	if err != nil {
		return -1
	}
	if revolution {
		rank = 12 - rank
	}
	return rank*4 + suitRanks[r.SuitOrder][suit]
}

// SortCards sorts cards in ascending order under the rules (the referee's order).
func (r Rules) SortCards(cards []string, revolution bool) {
	slices.SortFunc(cards, func(a, b string) int { return r.CardKey(a, revolution) - r.CardKey(b, revolution) })
}

// Combo is a classified play: its kind (the judge's names) and strength key.
type Combo struct {
	Kind  string // single, pair, triple, straight, flush, full_house, four_of_a_kind, straight_flush
	Cards []string
	Key   int
}

type sequence struct {
	ranks []int
	tie   int
}

func (r Rules) sequences() []sequence {
	var normal []sequence
	for i := 0; i < 8; i++ {
		normal = append(normal, sequence{[]int{i, i + 1, i + 2, i + 3, i + 4}, i + 4})
	}
	a2345 := sequence{[]int{11, 12, 0, 1, 2}, 12}
	t23456 := sequence{[]int{12, 0, 1, 2, 3}, 12}
	switch r.Straights {
	case "none-with-two":
		return normal
	case "wrap-high":
		return append(normal, a2345, t23456)
	default: // wrap-low: the top of the sequence breaks ties
		a2345.tie, t23456.tie = 2, 3
		return append([]sequence{a2345, t23456}, normal...)
	}
}

// Classify says what combination the cards form under the rules; ok is false when
// they are no play (or not cards).
func (r Rules) Classify(cards []string, revolution bool) (combo Combo, ok bool) {
	sr := suitRanks[r.SuitOrder]
	eff := func(rank int) int {
		if revolution {
			return 12 - rank
		}
		return rank
	}
	type card struct{ rank, suit int }
	parsed := make([]card, 0, len(cards))
	seen := map[card]bool{}
	counts := map[int]int{}
	suitSet := map[int]bool{}
	for _, c := range cards {
		rank, suit, err := ParseCard(c)
		if err != nil || seen[card{rank, suit}] {
			return Combo{}, false
		}
		seen[card{rank, suit}] = true
		parsed = append(parsed, card{rank, suit})
		counts[rank]++
		suitSet[suit] = true
	}
	out := Combo{Cards: slices.Clone(cards)}
	switch n := len(parsed); {
	case n == 1:
		out.Kind, out.Key = "single", eff(parsed[0].rank)*4+sr[parsed[0].suit]
		return out, true
	case n == 2 || n == 3:
		if len(counts) != 1 {
			return Combo{}, false
		}
		if n == 3 {
			out.Kind, out.Key = "triple", eff(parsed[0].rank)
			return out, true
		}
		out.Kind, out.Key = "pair", eff(parsed[0].rank)*4+max(sr[parsed[0].suit], sr[parsed[1].suit])
		return out, true
	case n != 5 || !r.FiveCardHands:
		return Combo{}, false
	}
	flush := len(suitSet) == 1
	if len(counts) == 5 {
		seqs := r.sequences()
		for i, seq := range seqs {
			match := true
			for _, rank := range seq.ranks {
				if counts[rank] == 0 {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			order := i
			if revolution {
				order = len(seqs) - 1 - i
			}
			flushOrder := order
			if r.LowestStraightBeatsStraights && seq.ranks[0] == 0 && seq.ranks[4] == 4 {
				order = len(seqs)
			}
			tieSuit := 0
			for _, c := range parsed {
				if c.rank == seq.tie {
					tieSuit = c.suit
				}
			}
			if flush {
				out.Kind, out.Key = "straight_flush", 4*shift+flushOrder*4+sr[tieSuit]
			} else {
				out.Kind, out.Key = "straight", order*4+sr[tieSuit]
			}
			return out, true
		}
		if flush {
			effRanks := 0
			for rank := range counts {
				effRanks |= 1 << eff(rank)
			}
			out.Kind, out.Key = "flush", shift+sr[parsed[0].suit]<<13|effRanks
			return out, true
		}
		return Combo{}, false
	}
	if len(counts) == 2 {
		for rank, c := range counts {
			switch c {
			case 3:
				out.Kind, out.Key = "full_house", 2*shift+eff(rank)
				return out, true
			case 4:
				out.Kind, out.Key = "four_of_a_kind", 3*shift+eff(rank)
				return out, true
			}
		}
	}
	return Combo{}, false
}

// Beats reports whether play may answer table (size, category and strength rules).
func (r Rules) Beats(play, table []string, revolution bool) bool {
	p, ok1 := r.Classify(play, revolution)
	t, ok2 := r.Classify(table, revolution)
	if !ok1 || !ok2 {
		return false
	}
	if r.Bomb && p.Kind == "four_of_a_kind" {
		if t.Kind == "straight_flush" {
			return false
		}
		if t.Kind == "four_of_a_kind" {
			return p.Key > t.Key
		}
		return true
	}
	if len(p.Cards) != len(t.Cards) {
		return false
	}
	if r.FiveCardCategories == "locked" && p.Kind != t.Kind {
		return false
	}
	return p.Key > t.Key
}
