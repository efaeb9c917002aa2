package pusoy

import (
	"context"
	"strings"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// Choice is a bot's answer to a prompt: the cards to play, such as Choice{"3D", "3C"},
// or Pass (nil). An empty choice is sent as a pass.
type Choice []string

// Pass is the Choice that passes.
var Pass Choice

// PlayCards is the Choice that plays the given cards.
func PlayCards(cards ...string) Choice { return Choice(cards) }

// IsPass reports whether the choice is sent as a pass.
func (c Choice) IsPass() bool { return len(c) == 0 }

// Bot is what the runner drives. Embed Base in your type to get the default hooks and
// write only Choose.
//
// Every method runs on one goroutine of the runner's, one call at a time, in the order
// the referee's messages arrived (docs/kits.md): a bot needs no locking. A panic in any
// of them is recovered and logged; the match goes on.
type Bot interface {
	// Choose returns the cards to play for this prompt, or Pass. ctx's deadline is the
	// budget (p.Budget): if Choose has not returned by then, the runner has sent
	// Fallback(p) instead and drops the late answer.
	Choose(ctx context.Context, p *Prompt) Choice
	// OnRejected says what to send after the referee rejected an answer, while attempts
	// are left, under the same budget. Base sends Fallback(p).
	OnRejected(ctx context.Context, p *Prompt, r *Rejection) Choice
	// OnWelcome is called when the referee gives the bot its seat (again, after a
	// reconnect).
	OnWelcome(w *Welcome)
	// OnSnapshot is called with the seat's view right after each Welcome.
	OnSnapshot(s *Snapshot)
	// OnEvent is called for every match event the seat may see (its own deal included).
	OnEvent(e *refereev1.Event)
}

// Base gives a Bot the default hooks. Embed it and write Choose.
type Base struct{}

// OnRejected sends the fallback: a pass when allowed, else the weakest legal play.
func (Base) OnRejected(_ context.Context, p *Prompt, _ *Rejection) Choice { return Fallback(p) }

// OnWelcome does nothing.
func (Base) OnWelcome(*Welcome) {}

// OnSnapshot does nothing.
func (Base) OnSnapshot(*Snapshot) {}

// OnEvent does nothing.
func (Base) OnEvent(*refereev1.Event) {}

// Fallback is the safest answer to a prompt: a pass when allowed, else the weakest
// legal play. When the prompt lists no legal plays (NoLegalPlays), it leads the card
// the play must include, or the lowest card in hand.
func Fallback(p *Prompt) Choice {
	if p.CanPass {
		return Pass
	}
	if len(p.LegalPlays) > 0 {
		return PlayCards(p.LegalPlays[0].Cards...)
	}
	if p.State.MustInclude != "" {
		return PlayCards(p.State.MustInclude)
	}
	if len(p.Hand) > 0 {
		return PlayCards(p.Hand[0])
	}
	return Pass
}

// Deck lists the 52 cards in the referee's notation, by rank then suit.
func Deck() []string {
	deck := make([]string, 0, 52)
	for _, r := range "3456789TJQKA2" {
		for _, s := range "CSHD" {
			deck = append(deck, string(r)+string(s))
		}
	}
	return deck
}

// CardNotInHand returns the lowest card of the deck (by rank, then C S H D) that is
// not in hand.
func CardNotInHand(hand []string) string {
	held := make(map[string]bool, len(hand))
	for _, c := range hand {
		held[strings.ToUpper(c)] = true
	}
	for _, c := range Deck() {
		if !held[c] {
			return c
		}
	}
	return "" // unreachable with fewer than 52 cards in hand
}

// Misbehave wraps a bot so that its first answer in each hand is a play of one card
// that is not in its hand. The referee rejects it, and the runner recovers through
// OnRejected (by default the fallback). It exists to exercise that path.
func Misbehave(b Bot) Bot { return &misbehaving{Bot: b} }

type misbehaving struct {
	Bot
	lastHand int
	started  bool
}

func (m *misbehaving) Choose(ctx context.Context, p *Prompt) Choice {
	if !m.started || p.State.HandNumber != m.lastHand {
		m.started, m.lastHand = true, p.State.HandNumber
		return PlayCards(CardNotInHand(p.Hand))
	}
	return m.Bot.Choose(ctx, p)
}
