package pusoy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// Exit codes of Main.
const (
	ExitOK          = 0 // the match ended (also when it ended while the bot was away)
	ExitError       = 1 // anything else (bad arguments, interrupted, ...)
	ExitRefused     = 2 // the referee refused the seat
	ExitUnreachable = 3 // the referee could not be reached within the reconnect window
)

// RegisterFlags adds --address and --token to fs, defaulting to the PUSOY_ADDRESS and
// PUSOY_TOKEN environment variables (which `referee match` sets).
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	addr := os.Getenv("PUSOY_ADDRESS")
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	fs.StringVar(&o.Address, "address", addr, "referee address host:port (env PUSOY_ADDRESS)")
	fs.StringVar(&o.Token, "token", os.Getenv("PUSOY_TOKEN"), "the seat's token (env PUSOY_TOKEN)")
}

// EnvBool reads a boolean environment variable ("1", "true", ...); false when unset
// or unreadable.
func EnvBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

// Main runs bot until the match ends, stopping on SIGINT or SIGTERM, reports the
// outcome on stdout (errors on stderr) and returns the process exit code.
func Main(bot Bot, opts Options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return report(os.Stdout, os.Stderr, opts, func() (*Outcome, error) { return Run(ctx, bot, opts) })
}

func report(stdout, stderr io.Writer, opts Options, run func() (*Outcome, error)) int {
	name := opts.Name
	if name == "" {
		name = "go-bot"
	}
	outcome, err := run()
	var refused *RefusedError
	switch {
	case err == nil:
		if outcome.Ended == nil {
			fmt.Fprintf(stdout, "%s: match %s ended while the bot was away (seat %d)\n", name, outcome.MatchID, outcome.Seat)
		} else {
			fmt.Fprintf(stdout, "%s: match %s over, seat %d placed %d\n", name, outcome.MatchID, outcome.Seat, outcome.Place())
		}
		return ExitOK
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitRefused
	case errors.Is(err, ErrUnreachable):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUnreachable
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitError
	}
}
