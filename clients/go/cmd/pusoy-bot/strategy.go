package main

import (
	"context"
	"math/rand/v2"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

// RandomBot plays at random among its legal plays, pass included when allowed, except
// when an opponent is about to go out: then it plays its strongest legal play.
// pusoy.TrackingBase gives it the default hooks and a tracker of the match.
type RandomBot struct {
	pusoy.TrackingBase
	rng *rand.Rand // used only by the bot's own calls, one at a time: no lock needed
}

// NewRandomBot returns a RandomBot drawing from rng.
func NewRandomBot(rng *rand.Rand) *RandomBot { return &RandomBot{rng: rng} }

// Choose is where a bot's logic goes: look at the prompt (your hand, the legal plays
// weakest first, whether you may pass, the table in p.State) and return the cards to
// play, or pusoy.Pass. Return before ctx is done (p.Budget); past it the library has
// sent the fallback on its own.
func (b *RandomBot) Choose(ctx context.Context, p *pusoy.Prompt) pusoy.Choice {
	if len(p.LegalPlays) == 0 {
		return pusoy.Fallback(p) // a pass: the only legal action (when legal plays are asked for)
	}
	t := b.Tracker()
	for seat := range 4 {
		if seat != p.Seat && t.CardsLeft(seat) == 1 {
			return strongest(t, p.LegalPlays)
		}
	}
	options := make([]pusoy.Choice, 0, len(p.LegalPlays)+1)
	for _, play := range p.LegalPlays {
		options = append(options, pusoy.PlayCards(play.Cards...))
	}
	if p.CanPass {
		options = append(options, pusoy.Pass)
	}
	return options[b.rng.IntN(len(options))]
}

// strongest is the legal play with the most cards, then the highest key.
func strongest(t *pusoy.Tracker, plays []pusoy.Play) pusoy.Choice {
	best, bestScore := plays[0].Cards, -1
	for _, play := range plays {
		score := len(play.Cards) << 24
		if c, ok := t.Rules.Classify(play.Cards, t.Revolution); ok {
			score += c.Key
		}
		if score > bestScore {
			best, bestScore = play.Cards, score
		}
	}
	return pusoy.PlayCards(best...)
}
