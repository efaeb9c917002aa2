// Command conformance-bot is the Go kit's conformance bot: a bot whose behaviour the
// transcript scripts (clients/conformance/README.md), run through the kit's own Main.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

type step struct {
	Play             []string `json:"play"`
	Pass             bool     `json:"pass"`
	BlockMs          *int     `json:"block_ms"`
	UntilRemainingMs *int     `json:"until_remaining_ms"`
	Throw            *string  `json:"throw"`
}

type script struct {
	Choose         map[string]step `json:"choose"`
	OnRejected     map[string]step `json:"on_rejected"`
	ThrowIn        []string        `json:"throw_in"`
	WantLegalPlays *bool           `json:"want_legal_plays"`
	Tracker        bool            `json:"tracker"`
	EventsBefore   map[string]int  `json:"events_before"`
	EventsTotal    *int            `json:"events_total"`
}

type bot struct {
	s       script
	tracker *pusoy.Tracker // with "tracker": fed by the hooks, checked in Choose
	events  int            // OnEvent calls so far
}

// exitCheckFailed ends the bot when a scripted check fails (the transcript then fails).
const exitCheckFailed = 70

func checkFailed(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go-conformance: check failed: "+format+"\n", args...)
	os.Exit(exitCheckFailed)
}

// trackerDiffers says what the tracker holds that differs from the prompt's state.
func trackerDiffers(t *pusoy.Tracker, p *pusoy.Prompt) string {
	st := p.State
	var table []string
	if st.Table != nil {
		table = st.Table.Cards
	}
	trick := func(ts []pusoy.TrickPlay) []string {
		out := []string{}
		for _, x := range ts {
			if x.Pass {
				out = append(out, fmt.Sprintf("%d:pass", x.Seat))
			} else {
				out = append(out, fmt.Sprintf("%d:%v", x.Seat, x.Play.Cards))
			}
		}
		return out
	}
	pairs := []struct {
		name        string
		mine, their any
	}{
		{"hand_number", t.HandNumber, st.HandNumber},
		{"hand", t.Hand, p.Hand},
		{"card_counts", t.CardCounts, st.CardCounts},
		{"played_cards", t.PlayedCards, st.PlayedCards},
		{"table", t.Table, table},
		{"table_seat", t.TableSeat, st.TableSeat},
		{"locked_out", t.LockedOut, st.LockedOut},
		{"revolution", t.Revolution, st.Revolution},
		{"trick", trick(t.Trick), trick(st.Trick)},
		{"totals", t.Totals, st.Totals},
		{"hands_won", t.HandsWon, st.HandsWon},
	}
	for _, c := range pairs {
		if norm(c.mine) != norm(c.their) {
			return fmt.Sprintf("turn %d: tracker %s %v, the referee's %v", p.TurnID, c.name, c.mine, c.their)
		}
	}
	return ""
}

// norm makes nil and empty slices equal.
func norm(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), "null", "[]")
}

func (b *bot) run(st step, p *pusoy.Prompt) pusoy.Choice {
	if st.BlockMs != nil {
		time.Sleep(time.Duration(*st.BlockMs) * time.Millisecond) // ignores ctx on purpose
	}
	if st.UntilRemainingMs != nil {
		for p.Budget.Remaining() > time.Duration(*st.UntilRemainingMs)*time.Millisecond {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if st.Throw != nil {
		panic(errors.New(*st.Throw))
	}
	if st.Pass {
		return pusoy.Pass
	}
	return pusoy.PlayCards(st.Play...)
}

func (b *bot) throws(hook string) {
	if slices.Contains(b.s.ThrowIn, hook) {
		panic("scripted failure in " + hook)
	}
}

func (b *bot) Choose(_ context.Context, p *pusoy.Prompt) pusoy.Choice {
	turn := strconv.FormatUint(p.TurnID, 10)
	if want, ok := b.s.EventsBefore[turn]; ok && want != b.events {
		checkFailed("turn %d: %d events before choose, not %d", p.TurnID, b.events, want)
	}
	if b.tracker != nil {
		if why := trackerDiffers(b.tracker, p); why != "" {
			checkFailed("%s", why)
		}
	}
	st, ok := b.s.Choose[strconv.FormatUint(p.TurnID, 10)]
	if !ok {
		if len(p.LegalPlays) == 0 {
			return pusoy.Pass
		}
		return pusoy.PlayCards(p.LegalPlays[0].Cards...)
	}
	return b.run(st, p)
}

func (b *bot) OnRejected(_ context.Context, p *pusoy.Prompt, _ *pusoy.Rejection) pusoy.Choice {
	b.throws("on_rejected")
	if st, ok := b.s.OnRejected[strconv.FormatUint(p.TurnID, 10)]; ok {
		return b.run(st, p)
	}
	return pusoy.Fallback(p)
}

func (b *bot) OnWelcome(w *pusoy.Welcome) {
	if b.tracker != nil {
		b.tracker.OnWelcome(w)
	}
	b.throws("on_welcome")
}

func (b *bot) OnSnapshot(s *pusoy.Snapshot) {
	if b.tracker != nil {
		b.tracker.OnSnapshot(s)
	}
	b.throws("on_snapshot")
}

func (b *bot) OnEvent(e *refereev1.Event) {
	b.events++
	if b.tracker != nil {
		b.tracker.OnEvent(e)
	}
	b.throws("on_event")
}

func main() {
	var s script
	if err := json.Unmarshal([]byte(os.Getenv("PUSOY_CONFORMANCE_BOT")), &s); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-bot: PUSOY_CONFORMANCE_BOT:", err)
		os.Exit(pusoy.ExitUsage)
	}
	opts, err := pusoy.ParseCommandLine("go-conformance", os.Args[1:], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-conformance:", err)
		os.Exit(pusoy.ExitCode(err))
	}
	opts.NoLegalPlays = s.WantLegalPlays != nil && !*s.WantLegalPlays
	b := &bot{s: s}
	if s.Tracker {
		b.tracker = pusoy.NewTracker()
	}
	code := pusoy.Main(b, opts)
	if code == pusoy.ExitOK && s.EventsTotal != nil && *s.EventsTotal != b.events {
		checkFailed("%d events in the run, not %d", b.events, *s.EventsTotal)
	}
	os.Exit(code)
}
