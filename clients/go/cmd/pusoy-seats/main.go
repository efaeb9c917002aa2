// Command pusoy-seats plays many seats at once in one process, one goroutine and one
// gRPC connection per seat (as separate bot programs would connect), each with
// pusoy.Run and a light random bot. It is a load generator: bench/bench_thousand.py
// runs a few of these to play a thousand matches at once against one referee.
//
//	pusoy-seats --address 127.0.0.1:50051 --tokens tokens.txt [--batch-events] [--seed N]
//
// The tokens file has one seat token per line ("-" reads standard input). When every
// seat's match is over it prints one JSON object on stdout: seats played, errors, and the
// delays, in microseconds, from a seat's action (turn t) to the next prompt (turn t+1) of
// the same match, for the matches whose four seats are all in this process. It exits 1
// when a seat did not finish its match.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

// turnKey names one turn of one match.
type turnKey struct {
	match string
	turn  uint64
}

// clock records when each turn was prompted and answered, for every seat of the process.
type clock struct {
	mu       sync.Mutex
	prompted map[turnKey]time.Time
	answered map[turnKey]time.Time
}

func newClock() *clock {
	return &clock{prompted: map[turnKey]time.Time{}, answered: map[turnKey]time.Time{}}
}

func (c *clock) mark(m map[turnKey]time.Time, k turnKey) {
	now := time.Now()
	c.mu.Lock()
	m[k] = now
	c.mu.Unlock()
}

// latencies are the delays from the answer of turn t to the prompt of turn t+1, in µs.
func (c *clock) latencies() []int64 {
	out := make([]int64, 0, len(c.prompted))
	for k, at := range c.prompted {
		if before, ok := c.answered[turnKey{k.match, k.turn - 1}]; ok && k.turn > 0 {
			out = append(out, at.Sub(before).Microseconds())
		}
	}
	return out
}

// lightBot answers at once: a random legal play, or a pass when it may.
type lightBot struct {
	pusoy.Base
	rng   *rand.Rand
	clock *clock
	start time.Time
	// seated is when the first Welcome came, since the process started (0: never).
	seated time.Duration
}

func (b *lightBot) OnWelcome(*pusoy.Welcome) {
	if b.seated == 0 {
		b.seated = time.Since(b.start)
	}
}

func (b *lightBot) Choose(_ context.Context, p *pusoy.Prompt) pusoy.Choice {
	key := turnKey{p.State.MatchID, p.TurnID}
	b.clock.mark(b.clock.prompted, key)
	choice := pusoy.Fallback(p)
	if n := len(p.LegalPlays); n > 0 {
		pick := b.rng.IntN(n + 1)
		switch {
		case pick < n:
			choice = pusoy.PlayCards(p.LegalPlays[pick].Cards...)
		case p.CanPass:
			choice = pusoy.Pass
		}
	}
	b.clock.mark(b.clock.answered, key)
	return choice
}

// counting is a slog handler that counts the library's warnings and errors by message
// (a fallback sent past the budget, a rejected action) instead of printing each.
type counting struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *counting) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *counting) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.counts[r.Message]++
	h.mu.Unlock()
	return nil
}
func (h *counting) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *counting) WithGroup(string) slog.Handler      { return h }

type report struct {
	Seats       int            `json:"seats"`
	Finished    int            `json:"finished"`
	Errors      []string       `json:"errors"`
	Warnings    map[string]int `json:"warnings"`
	Prompts     int            `json:"prompts"`
	WallSeconds float64        `json:"wall_seconds"`
	// SeatedMS is, per seat, the milliseconds from the start to its first Welcome (-1:
	// never seated).
	SeatedMS    []int64 `json:"seated_ms"`
	LatenciesUS []int64 `json:"latencies_us"`
}

func readTokens(path string) ([]string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var tokens []string
	scan := bufio.NewScanner(r)
	for scan.Scan() {
		if t := strings.TrimSpace(scan.Text()); t != "" {
			tokens = append(tokens, t)
		}
	}
	return tokens, scan.Err()
}

func main() {
	address := flag.String("address", pusoy.DefaultAddress, "the referee's host:port")
	tokensPath := flag.String("tokens", "-", "file of seat tokens, one per line (-: standard input)")
	batch := flag.Bool("batch-events", false, "ask for the events batched into the prompts (Hello.batch_events)")
	window := flag.Duration("reconnect-window", pusoy.DefaultReconnectWindow,
		"how long each seat keeps trying to get its seat (a busy referee seats thousands slowly)")
	verbose := flag.Bool("verbose", false, "print the library's messages on stderr (default: count its warnings)")
	seed := flag.Uint64("seed", 1, "seed of the random choices")
	flag.Parse()
	tokens, err := readTokens(*tokensPath)
	if err != nil || len(tokens) == 0 {
		fmt.Fprintf(os.Stderr, "pusoy-seats: no tokens read from %s: %v\n", *tokensPath, err)
		os.Exit(pusoy.ExitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	warnings := &counting{counts: map[string]int{}}
	logger := slog.New(warnings)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	clk := newClock()
	var finished atomic.Int64
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	start := time.Now()
	bots := make([]*lightBot, len(tokens))
	for i, token := range tokens {
		bots[i] = &lightBot{rng: rand.New(rand.NewPCG(*seed, uint64(i))), clock: clk, start: start}
		wg.Add(1)
		go func() {
			defer wg.Done()
			bot := bots[i]
			opts := pusoy.Options{
				Address: *address, Token: token, Name: "go-seats",
				BatchEvents: *batch, Logger: logger, ReconnectWindow: *window,
			}
			if _, err := pusoy.Run(ctx, bot, opts); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("seat %d after %.1f s: %v", i, time.Since(start).Seconds(), err))
				mu.Unlock()
				return
			}
			finished.Add(1)
		}()
	}
	wg.Wait()
	clk.mu.Lock()
	out := report{
		Seats: len(tokens), Finished: int(finished.Load()), Errors: errs,
		Warnings: warnings.counts, Prompts: len(clk.prompted),
		WallSeconds: time.Since(start).Seconds(), LatenciesUS: clk.latencies(),
	}
	clk.mu.Unlock()
	for _, b := range bots {
		ms := int64(-1)
		if b.seated > 0 {
			ms = b.seated.Milliseconds()
		}
		out.SeatedMS = append(out.SeatedMS, ms)
	}
	if out.Errors == nil {
		out.Errors = []string{}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "pusoy-seats: %v\n", err)
		os.Exit(pusoy.ExitError)
	}
	if out.Finished != out.Seats {
		os.Exit(pusoy.ExitError)
	}
}
