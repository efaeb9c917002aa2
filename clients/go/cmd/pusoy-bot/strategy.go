package main

import (
	"context"
	"math/rand/v2"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

// RandomBot plays uniformly at random among its legal plays, pass included when
// allowed. pusoy.Base gives it the default hooks (OnRejected sends the fallback).
type RandomBot struct {
	pusoy.Base
	rng *rand.Rand
}

// NewRandomBot returns a RandomBot drawing from rng.
func NewRandomBot(rng *rand.Rand) *RandomBot { return &RandomBot{rng: rng} }

// Choose is where a bot's logic goes: look at the prompt (your hand, the legal plays
// weakest first, whether you may pass, the table in p.State) and return the cards to
// play, or pusoy.Pass. Return before ctx is done; past it the library sends the
// fallback on its own.
func (b *RandomBot) Choose(ctx context.Context, p *pusoy.Prompt) pusoy.Choice {
	options := make([]pusoy.Choice, 0, len(p.LegalPlays)+1)
	for _, play := range p.LegalPlays {
		options = append(options, pusoy.PlayCards(play.Cards...))
	}
	if p.CanPass {
		options = append(options, pusoy.Pass)
	}
	if len(options) == 0 {
		return pusoy.Fallback(p)
	}
	return options[b.rng.IntN(len(options))]
}
