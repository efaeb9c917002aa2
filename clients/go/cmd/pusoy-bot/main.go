// Command pusoy-bot is the sample bot of the Go starter kit. Its logic is in
// strategy.go; this file only wires it up.
//
//	pusoy-bot --address 127.0.0.1:50051 --token TOKEN [--misbehave] [--seed N]
//
// The flags of docs/kits.md work, each with its PUSOY_* variable.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/pusoy-referee/pusoy-referee/clients/go/pusoy"
)

func main() {
	var misbehave *bool
	var seed *uint64
	opts, err := pusoy.ParseCommandLine("go-sample", os.Args[1:], func(fs *flag.FlagSet) {
		misbehave = fs.Bool("misbehave", pusoy.EnvBool("PUSOY_MISBEHAVE"),
			"first answer of each hand plays a card not in hand, to exercise recovery (PUSOY_MISBEHAVE=1)")
		seed = fs.Uint64("seed", 0, "seed of the random choices (0: from the clock)")
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-sample: %v\n", err)
		os.Exit(pusoy.ExitCode(err))
	}
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
