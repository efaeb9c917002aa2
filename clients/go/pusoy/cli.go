package pusoy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of Main (docs/kits.md, section 7).
const (
	ExitOK          = 0  // the match ended (also when it ended while the bot was away)
	ExitError       = 1  // an internal error
	ExitRefused     = 2  // the referee refused the seat
	ExitUnreachable = 3  // no seat within the reconnect window
	ExitRPC         = 4  // the stream failed in a way a reconnect cannot fix
	ExitUsage       = 64 // bad flags, no token, an unreadable TLS file
)

// Main runs bot until the match ends, stopping on SIGINT or SIGTERM, reports the
// outcome on stdout (errors on stderr) and returns the process exit code.
func Main(bot Bot, opts Options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return report(os.Stdout, os.Stderr, opts, func() (*Outcome, error) { return Run(ctx, bot, opts) })
}

// ExitCode is the exit code for an error of Run or ParseCommandLine (0 for nil).
func ExitCode(err error) int {
	var refused *RefusedError
	var usage *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &refused):
		return ExitRefused
	case errors.Is(err, ErrUnreachable):
		return ExitUnreachable
	case errors.Is(err, ErrRPC):
		return ExitRPC
	default:
		return ExitError
	}
}

func report(stdout, stderr io.Writer, opts Options, run func() (*Outcome, error)) int {
	name := opts.Name
	if name == "" {
		name = "go-bot"
	}
	outcome, err := run()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitCode(err)
	}
	if outcome.Ended == nil {
		fmt.Fprintf(stdout, "%s: match %s ended while the bot was away (seat %d)\n", name, outcome.MatchID, outcome.Seat)
	} else {
		fmt.Fprintf(stdout, "%s: match %s over, seat %d placed %d\n", name, outcome.MatchID, outcome.Seat, outcome.Place())
	}
	return ExitOK
}
