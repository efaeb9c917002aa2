package main

import (
	"testing"
	"time"
)

func TestLatenciesPairEachPromptWithThePreviousTurnsAnswerOfTheSameMatch(t *testing.T) {
	c := newClock()
	t0 := time.Now()
	c.answered[turnKey{"a", 1}] = t0
	c.prompted[turnKey{"a", 2}] = t0.Add(3 * time.Millisecond)
	c.prompted[turnKey{"a", 1}] = t0.Add(-time.Millisecond) // the first turn: nothing before it
	c.prompted[turnKey{"b", 2}] = t0.Add(time.Second)       // another match: its turn 1 is elsewhere
	got := c.latencies()
	if len(got) != 1 || got[0] != 3000 {
		t.Fatalf("latencies = %v, want [3000]", got)
	}
}
