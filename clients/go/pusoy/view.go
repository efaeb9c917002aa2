package pusoy

import (
	"time"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// Combination is the kind of a play (single, pair, straight, ...).
type Combination = refereev1.Combination

// RejectionReason says why the referee refused an action.
type RejectionReason = refereev1.RejectionReason

// Play is a set of cards and the combination they form.
type Play struct {
	Cards       []string
	Combination Combination
}

// TrickPlay is one action inside the current trick: a play, or a pass.
type TrickPlay struct {
	Seat int
	Play Play // empty for a pass
	Pass bool
}

// State is the public state of the current hand plus the match scores: what every
// seat knows. Seat-indexed slices are indexed by seat 0..3.
type State struct {
	MatchID     string
	HandNumber  int
	Turn        int    // the seat to act, or -1 between hands
	Table       *Play  // the play to beat; nil on a fresh lead
	TableSeat   int    // who made Table, or -1
	CardCounts  []int  // cards left in each seat's hand
	LockedOut   []bool // seats locked out of the current trick
	MustInclude string // the card the next play must contain, or ""
	Revolution  bool   // rank comparisons are inverted
	LoneTwoRule bool   // going out on a lone 2 is still forbidden in this hand
	PlayedCards []string
	Trick       []TrickPlay // the current trick, oldest first
	Totals      []int       // match totals before this hand
	HandsWon    []int
	Strikes     []int
}

// Prompt is the library's view of a TurnPrompt: everything needed to answer it.
type Prompt struct {
	TurnID       uint64
	Seat         int
	Deadline     time.Time     // the turn's deadline by the referee's clock, time bank excluded
	TurnTime     time.Duration // the per-turn limit
	TimeBank     time.Duration // the seat's reserve, drawn on past the deadline
	Hand         []string      // the seat's cards, ascending
	LegalPlays   []Play        // every legal play, weakest first (unless NoLegalPlays was set)
	CanPass      bool
	IsLead       bool
	AttemptsLeft int // rejected attempts left before the referee plays a default action
	State        State

	// Budget is when the answer is due (docs/kits.md): the Choose context's deadline.
	Budget Budget

	// Raw is the message as received, for fields this view does not carry.
	Raw *refereev1.TurnPrompt
}

// Budget is the time left to answer a prompt, on the monotonic clock:
// min(deadline, receipt + turn time) + the time bank - the safety margin.
type Budget struct {
	Deadline time.Time // carries a monotonic reading: compare it with time.Now() only
}

// Remaining is the time left (0 once expired).
func (b Budget) Remaining() time.Duration { return max(0, time.Until(b.Deadline)) }

// Expired reports whether the answer is overdue.
func (b Budget) Expired() bool { return !time.Now().Before(b.Deadline) }

// DefaultTurnTime is assumed for a prompt with neither a deadline nor a turn time.
const DefaultTurnTime = 5 * time.Second

// NewBudget is the budget of p received at received (a time.Now() reading, so with its
// monotonic clock).
func NewBudget(p *Prompt, received time.Time, margin time.Duration, useBank bool) Budget {
	span := p.TurnTime
	if !p.Deadline.IsZero() {
		until := max(0, p.Deadline.Sub(received.Round(0))) // wall clock against the referee's
		if span <= 0 || until < span {
			span = until
		}
	} else if span <= 0 {
		span = DefaultTurnTime
	}
	if useBank {
		span += p.TimeBank
	}
	return Budget{Deadline: received.Add(span - margin)}
}

// Rejection is the referee's refusal of an action (an ActionResult that is not accepted).
type Rejection struct {
	TurnID       uint64
	Accepted     bool
	Reason       RejectionReason
	Message      string
	AttemptsLeft int
}

// Welcome tells the bot which seat it holds.
type Welcome struct {
	Seat      int
	MatchID   string
	Reconnect bool // the seat had been connected before in this match
	Config    *refereev1.MatchConfig
	Raw       *refereev1.Welcome
}

// Snapshot is the seat's view right after a (re)connect: the public state and its cards.
type Snapshot struct {
	State State
	Hand  []string
}

// NewPrompt converts a TurnPrompt message into the library's view.
func NewPrompt(m *refereev1.TurnPrompt) *Prompt {
	p := &Prompt{
		TurnID:       m.GetTurnId(),
		Seat:         int(m.GetSeat()),
		TurnTime:     time.Duration(m.GetTurnTimeMs()) * time.Millisecond,
		TimeBank:     time.Duration(m.GetTimeBankMs()) * time.Millisecond,
		Hand:         cloneStrings(m.GetHand()),
		LegalPlays:   make([]Play, 0, len(m.GetLegalPlays())),
		CanPass:      m.GetCanPass(),
		IsLead:       m.GetIsLead(),
		AttemptsLeft: int(m.GetAttemptsLeft()),
		State:        newState(m.GetState()),
		Raw:          m,
	}
	if d := m.GetDeadline(); d != nil {
		p.Deadline = d.AsTime()
	}
	for _, lp := range m.GetLegalPlays() {
		p.LegalPlays = append(p.LegalPlays, newPlay(lp))
	}
	return p
}

// NewRejection converts an ActionResult message into the library's view.
func NewRejection(m *refereev1.ActionResult) *Rejection {
	return &Rejection{
		TurnID:       m.GetTurnId(),
		Accepted:     m.GetAccepted(),
		Reason:       m.GetReason(),
		Message:      m.GetMessage(),
		AttemptsLeft: int(m.GetAttemptsLeft()),
	}
}

// NewWelcome converts a Welcome message into the library's view.
func NewWelcome(m *refereev1.Welcome) *Welcome {
	return &Welcome{
		Seat:      int(m.GetSeat()),
		MatchID:   m.GetMatchId(),
		Reconnect: m.GetReconnect(),
		Config:    m.GetConfig(),
		Raw:       m,
	}
}

// NewSnapshot converts a Snapshot message into the library's view.
func NewSnapshot(m *refereev1.Snapshot) *Snapshot {
	return &Snapshot{State: newState(m.GetState()), Hand: cloneStrings(m.GetHand())}
}

func newState(m *refereev1.PublicState) State {
	s := State{
		MatchID:     m.GetMatchId(),
		HandNumber:  int(m.GetHandNumber()),
		Turn:        -1,
		TableSeat:   -1,
		CardCounts:  toInts(m.GetCardCounts()),
		LockedOut:   append([]bool(nil), m.GetLockedOut()...),
		MustInclude: m.GetMustInclude(),
		Revolution:  m.GetRevolution(),
		LoneTwoRule: m.GetLoneTwoRule(),
		PlayedCards: cloneStrings(m.GetPlayedCards()),
		Totals:      toInts(m.GetTotals()),
		HandsWon:    toInts(m.GetHandsWon()),
		Strikes:     toInts(m.GetStrikes()),
	}
	if m == nil {
		return s
	}
	if m.Turn != nil {
		s.Turn = int(m.GetTurn())
	}
	if m.TableSeat != nil {
		s.TableSeat = int(m.GetTableSeat())
	}
	if t := m.GetTable(); t != nil && len(t.GetCards()) > 0 {
		play := newPlay(t)
		s.Table = &play
	}
	for _, tp := range m.GetTrick() {
		s.Trick = append(s.Trick, TrickPlay{Seat: int(tp.GetSeat()), Play: newPlay(tp.GetPlay()), Pass: tp.GetPass()})
	}
	return s
}

func newPlay(m *refereev1.Play) Play {
	return Play{Cards: cloneStrings(m.GetCards()), Combination: m.GetCombination()}
}

func cloneStrings(s []string) []string {
	return append([]string(nil), s...)
}

func toInts[T int32 | uint32](xs []T) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
