// Command pusoy-bot is the sample bot of the Go starter kit: it plays a uniformly
// random legal play. Its logic is in strategy.go; this file only wires it up.
//
//	pusoy-bot --address 127.0.0.1:50051 --token TOKEN [--misbehave] [--seed N]
//
// PUSOY_ADDRESS, PUSOY_TOKEN and PUSOY_MISBEHAVE=1 work as well.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

func main() {
	opts := pusoy.Options{Name: "go-random"}
	opts.RegisterFlags(flag.CommandLine)
	misbehave := flag.Bool("misbehave", pusoy.EnvBool("PUSOY_MISBEHAVE"),
		"first answer of each hand plays a card not in hand, to exercise recovery (env PUSOY_MISBEHAVE=1)")
	seed := flag.Uint64("seed", 0, "seed of the random choices (0: from the clock)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", flag.Args())
		flag.Usage()
		os.Exit(pusoy.ExitError)
	}
	if opts.Token == "" {
		fmt.Fprintln(os.Stderr, "a seat token is needed: --token or PUSOY_TOKEN")
		flag.Usage()
		os.Exit(pusoy.ExitError)
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))

	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	var bot pusoy.Bot = NewRandomBot(rand.New(rand.NewPCG(*seed, *seed>>1|1)))
	if *misbehave {
		opts.Name += "-misbehaving"
		bot = pusoy.Misbehave(bot)
	}
	os.Exit(pusoy.Main(bot, opts))
}
