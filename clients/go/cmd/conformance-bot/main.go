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
}

type bot struct{ s script }

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

func (b *bot) OnWelcome(*pusoy.Welcome)   { b.throws("on_welcome") }
func (b *bot) OnSnapshot(*pusoy.Snapshot) { b.throws("on_snapshot") }
func (b *bot) OnEvent(*refereev1.Event)   { b.throws("on_event") }

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
	os.Exit(pusoy.Main(&bot{s: s}, opts))
}
