package pusoy

import (
	"slices"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// Tracker is a seat's view of the match, kept from the welcome, the snapshot and the
// events: feed it from the hooks (or embed TrackingBase) and read it in Choose. It
// starts again from every snapshot, so it is right after a reconnect too. Checked
// against the referee's own PublicState in clients/conformance/tracker_streams.jsonl.
type Tracker struct {
	Seat         int
	Rules        Rules
	PassLocksOut bool
	HandNumber   int
	Hand         []string
	CardCounts   []int
	PlayedCards  []string
	Trick        []TrickPlay
	Table        []string
	TableSeat    int // -1: none
	LockedOut    []bool
	Revolution   bool
	Totals       []int
	HandsWon     []int
}

// NewTracker is a tracker before the welcome.
func NewTracker() *Tracker {
	return &Tracker{Seat: -1, Rules: DefaultRules, TableSeat: -1, CardCounts: make([]int, 4),
		LockedOut: make([]bool, 4), Totals: make([]int, 4), HandsWon: make([]int, 4)}
}

// OnWelcome takes the seat and the rules.
func (t *Tracker) OnWelcome(w *Welcome) {
	t.Seat = w.Seat
	t.Rules = RulesFrom(w.Config.GetRules())
	t.PassLocksOut = w.Config.GetRules().GetPassLocksOut()
}

func fill[T any](xs []T, n int) []T {
	if len(xs) == 0 {
		return make([]T, n)
	}
	return slices.Clone(xs)
}

// OnSnapshot starts again from the seat's view.
func (t *Tracker) OnSnapshot(s *Snapshot) {
	st := s.State
	t.HandNumber = st.HandNumber
	t.Hand = slices.Clone(s.Hand)
	t.CardCounts = fill(st.CardCounts, 4)
	t.PlayedCards = slices.Clone(st.PlayedCards)
	t.Trick = slices.Clone(st.Trick)
	t.Table = nil
	if st.Table != nil {
		t.Table = slices.Clone(st.Table.Cards)
	}
	t.TableSeat = st.TableSeat
	t.LockedOut = fill(st.LockedOut, 4)
	t.Revolution = st.Revolution
	t.Totals = fill(st.Totals, 4)
	t.HandsWon = fill(st.HandsWon, 4)
}

// OnEvent keeps the view up to date.
func (t *Tracker) OnEvent(e *refereev1.Event) {
	switch {
	case e.GetHandDealt() != nil:
		d := e.GetHandDealt()
		t.HandNumber = int(d.GetHandNumber())
		t.CardCounts = make([]int, 4)
		for _, h := range d.GetHands() {
			t.CardCounts[h.GetSeat()] = int(h.GetCount())
			if int(h.GetSeat()) == t.Seat {
				t.Hand = slices.Clone(h.GetCards())
			}
		}
		t.PlayedCards, t.Trick, t.Table, t.TableSeat, t.Revolution = nil, nil, nil, -1, false
		t.LockedOut = make([]bool, 4)
	case e.GetPlayed() != nil:
		p := e.GetPlayed()
		cards := slices.Clone(p.GetPlay().GetCards())
		seat := int(p.GetSeat())
		t.CardCounts[seat] = int(p.GetCardsLeft())
		t.PlayedCards = append(t.PlayedCards, cards...)
		t.Rules.SortCards(t.PlayedCards, false)
		t.Trick = append(t.Trick, TrickPlay{Seat: seat, Play: Play{Cards: cards, Combination: p.GetPlay().GetCombination()}})
		t.Table, t.TableSeat, t.Revolution = cards, seat, p.GetRevolution()
		if seat == t.Seat {
			t.Hand = slices.DeleteFunc(t.Hand, func(c string) bool { return slices.Contains(cards, c) })
		}
	case e.GetPassed() != nil:
		p := e.GetPassed()
		t.Trick = append(t.Trick, TrickPlay{Seat: int(p.GetSeat()), Pass: true})
		if t.PassLocksOut && !p.GetForcedLeadPass() {
			t.LockedOut[p.GetSeat()] = true
		}
	case e.GetTrickCleared() != nil:
		t.Trick, t.Table, t.TableSeat = nil, nil, -1
		t.LockedOut = make([]bool, 4)
	case e.GetHandEnded() != nil:
		h := e.GetHandEnded()
		t.Totals = toInts(h.GetTotals())
		t.HandsWon[h.GetWinner()]++
	}
}

// CardsLeft is how many cards seat holds.
func (t *Tracker) CardsLeft(seat int) int { return t.CardCounts[seat] }

// TrackingBase gives a Bot the default hooks plus a Tracker fed by them (Tracker()).
// Embed it instead of Base; call its hooks if you override them.
type TrackingBase struct {
	Base
	tracker *Tracker
}

// Tracker is the bot's view of the match.
func (b *TrackingBase) Tracker() *Tracker {
	if b.tracker == nil {
		b.tracker = NewTracker()
	}
	return b.tracker
}

// OnWelcome feeds the tracker.
func (b *TrackingBase) OnWelcome(w *Welcome) { b.Tracker().OnWelcome(w) }

// OnSnapshot feeds the tracker.
func (b *TrackingBase) OnSnapshot(s *Snapshot) { b.Tracker().OnSnapshot(s) }

// OnEvent feeds the tracker.
func (b *TrackingBase) OnEvent(e *refereev1.Event) { b.Tracker().OnEvent(e) }
