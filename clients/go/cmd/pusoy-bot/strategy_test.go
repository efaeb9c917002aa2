package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

func key(c pusoy.Choice) string {
	if c.IsPass() {
		return "pass"
	}
	return strings.Join(c, " ")
}

func TestRandomBotPicksEveryLegalOptionAndNothingElse(t *testing.T) {
	p := &pusoy.Prompt{
		Hand:       []string{"4C", "4S", "9H"},
		LegalPlays: []pusoy.Play{{Cards: []string{"4C"}}, {Cards: []string{"4S"}}, {Cards: []string{"4C", "4S"}}},
		CanPass:    true,
	}
	bot := NewRandomBot(rand.New(rand.NewPCG(1, 2)))
	seen := map[string]int{}
	for range 4000 {
		seen[key(bot.Choose(context.Background(), p))]++
	}
	want := []string{"4C", "4S", "4C 4S", "pass"}
	if len(seen) != len(want) {
		t.Fatalf("choices = %v, want exactly %v", seen, want)
	}
	for _, k := range want {
		// Uniform: about 1000 each.
		if n := seen[k]; n < 850 || n > 1150 {
			t.Errorf("%q chosen %d times of 4000", k, n)
		}
	}
}

func TestRandomBotNeverPassesOnALead(t *testing.T) {
	p := &pusoy.Prompt{IsLead: true, LegalPlays: []pusoy.Play{{Cards: []string{"3C"}}, {Cards: []string{"3C", "3D"}}}}
	bot := NewRandomBot(rand.New(rand.NewPCG(3, 4)))
	for range 200 {
		if c := bot.Choose(context.Background(), p); c.IsPass() || !slices.Contains(c, "3C") {
			t.Fatalf("lead choice %v", c)
		}
	}
}

func TestRandomBotPlaysItsStrongestWhenAnOpponentHasOneCard(t *testing.T) {
	bot := NewRandomBot(rand.New(rand.NewPCG(7, 8)))
	bot.Tracker().CardCounts = []int{5, 1, 9, 9}
	p := &pusoy.Prompt{Seat: 0, CanPass: true, LegalPlays: []pusoy.Play{{Cards: []string{"4C"}}, {Cards: []string{"2S"}}, {Cards: []string{"9H"}}}}
	for range 50 {
		if c := bot.Choose(context.Background(), p); key(c) != "2S" {
			t.Fatalf("choice %v, want the strongest, 2S", c)
		}
	}
}

func TestRandomBotWithoutLegalPlaysFallsBack(t *testing.T) {
	p := &pusoy.Prompt{IsLead: true, Hand: []string{"5D", "8S"}}
	if c := NewRandomBot(rand.New(rand.NewPCG(5, 6))).Choose(context.Background(), p); key(c) != "5D" {
		t.Errorf("choice %v, want the fallback 5D", c)
	}
}
