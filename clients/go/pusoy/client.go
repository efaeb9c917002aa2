package pusoy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// ProtocolVersion is the bot protocol version this library speaks.
const ProtocolVersion = 1

const (
	// DefaultReconnectWindow is how long the runner keeps trying to get its seat back
	// after a dropped stream (or to reach the referee at all) before giving up.
	DefaultReconnectWindow = 30 * time.Second
	// DefaultDeadlineMargin is how long before the deadline the runner stops waiting
	// for Choose and sends the fallback.
	DefaultDeadlineMargin = 50 * time.Millisecond

	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// Options configure Run.
type Options struct {
	Address string // host:port of the referee
	Token   string // the seat's secret token
	Name    string // the bot's name in the referee's logs; default "go-bot"

	// NoLegalPlays stops the referee from listing the legal plays in every prompt.
	NoLegalPlays bool
	// ReconnectWindow overrides DefaultReconnectWindow when positive.
	ReconnectWindow time.Duration
	// DeadlineMargin overrides DefaultDeadlineMargin when positive.
	DeadlineMargin time.Duration
	// Logger receives the runner's messages; nil: slog.Default().
	Logger *slog.Logger
	// DialOptions are added to the gRPC client's (insecure transport by default).
	DialOptions []grpc.DialOption
}

// Outcome is how the match ended for the bot.
type Outcome struct {
	Seat    int
	MatchID string
	// Ended is the match_ended event, or nil when the match ended while the bot was
	// disconnected (the referee answered MATCH_OVER to its reconnect).
	Ended *refereev1.MatchEnded
}

// Place is the seat's place in the standings (1 = first), or 0 when unknown.
func (o *Outcome) Place() int {
	for _, st := range o.Ended.GetStandings() {
		for _, s := range st.GetSeats() {
			if int(s) == o.Seat {
				return int(st.GetPlace())
			}
		}
	}
	return 0
}

// RefusedError is returned when the referee refuses the seat (bad token, seat taken,
// protocol version, match over before the bot was ever seated, ...).
type RefusedError struct {
	Reason            refereev1.RefusalReason
	Message           string
	SupportedVersions []uint32
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused: %s: %s", e.Reason, e.Message)
}

// ErrUnreachable is wrapped by the error Run returns when it could not reach the
// referee (or get the seat back) within the reconnect window.
var ErrUnreachable = errors.New("could not reach the referee")

// Run connects bot to the referee at opts.Address, takes the seat of opts.Token and
// plays until the match ends. It reconnects with the same token after a dropped
// stream. It returns a *RefusedError when the referee refuses the seat, an error
// wrapping ErrUnreachable when the referee stays out of reach, or ctx's error.
func Run(ctx context.Context, bot Bot, opts Options) (*Outcome, error) {
	if opts.Address == "" {
		return nil, errors.New("no referee address (--address or PUSOY_ADDRESS)")
	}
	if opts.Token == "" {
		return nil, errors.New("no seat token (--token or PUSOY_TOKEN)")
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts.DialOptions...)
	conn, err := grpc.NewClient(opts.Address, dial...)
	if err != nil {
		return nil, fmt.Errorf("referee address %q: %w", opts.Address, err)
	}
	defer conn.Close()
	return RunWithClient(ctx, bot, refereev1.NewPlayServiceClient(conn), opts)
}

// RunWithClient is Run over an existing PlayService client (opts.Address is only
// used in messages).
func RunWithClient(ctx context.Context, bot Bot, client refereev1.PlayServiceClient, opts Options) (*Outcome, error) {
	s := &session{bot: bot, client: client, opts: opts, seat: -1, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.opts.Name == "" {
		s.opts.Name = "go-bot"
	}
	window := opts.ReconnectWindow
	if window <= 0 {
		window = DefaultReconnectWindow
	}
	lastSeated := time.Now() // the window runs from the start, then from each drop
	var delay time.Duration  // the first reconnect is immediate, then back off
	for {
		outcome, seated, err := s.playOnce(ctx)
		if outcome != nil {
			return outcome, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if seated {
			lastSeated, delay = time.Now(), 0
		}
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			// Right after a drop the referee may not have noticed yet: retry a seat
			// it still thinks is taken, within the window.
			if refused.Reason != refereev1.RefusalReason_REFUSAL_REASON_SEAT_TAKEN {
				return nil, err
			}
		case err == nil: // the stream ended cleanly before match_ended
		case retryable(err):
		default:
			return nil, err
		}
		if time.Since(lastSeated) > window {
			if refused != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w at %s within %s: %v", ErrUnreachable, opts.Address, window, err)
		}
		if s.seat >= 0 {
			s.log.Info("stream ended before the match did; reconnecting", "error", err, "after", delay)
		}
		if delay > 0 {
			sleep := delay + time.Duration(rand.Int64N(int64(delay))) // jitter: [delay, 2*delay)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(sleep):
			}
		}
		delay = min(max(delay*2, minBackoff), maxBackoff)
	}
}

// retryable reports whether a stream error may be cured by reconnecting.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// HelloRequest builds the first message of a stream.
func HelloRequest(opts Options) *refereev1.PlayRequest {
	return &refereev1.PlayRequest{Kind: &refereev1.PlayRequest_Hello{Hello: &refereev1.Hello{
		ProtocolVersion: ProtocolVersion,
		Token:           opts.Token,
		WantLegalPlays:  !opts.NoLegalPlays,
		BotName:         opts.Name,
	}}}
}

// ActionRequest builds the answer to turn turnID: a play of the chosen cards, or a
// pass when the choice is empty.
func ActionRequest(turnID uint64, c Choice) *refereev1.PlayRequest {
	action := &refereev1.Action{TurnId: turnID}
	if c.IsPass() {
		action.Kind = &refereev1.Action_Pass{Pass: &refereev1.Pass{}}
	} else {
		action.Kind = &refereev1.Action_Play{Play: &refereev1.Cards{Cards: append([]string(nil), c...)}}
	}
	return &refereev1.PlayRequest{Kind: &refereev1.PlayRequest_Action{Action: action}}
}

type session struct {
	bot     Bot
	client  refereev1.PlayServiceClient
	opts    Options
	log     *slog.Logger
	seat    int // -1 until the first Welcome
	matchID string
}

// playOnce plays over one stream. It returns the outcome when the match ended, and
// whether the stream was given the seat.
func (s *session) playOnce(ctx context.Context) (outcome *Outcome, seated bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream; never CloseSend early: the referee takes it as leaving
	stream, err := s.client.Play(ctx)
	if err != nil {
		return nil, false, err
	}
	send := func(req *refereev1.PlayRequest) error {
		// io.EOF: the referee ended the stream; Recv reports how.
		if err := stream.Send(req); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	if err := send(HelloRequest(s.opts)); err != nil {
		return nil, false, err
	}
	var prompt *Prompt
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, seated, nil
		}
		if err != nil {
			return nil, seated, err
		}
		received := time.Now()
		switch kind := msg.GetKind().(type) {
		case *refereev1.PlayResponse_Welcome:
			w := NewWelcome(kind.Welcome)
			seated, s.seat, s.matchID = true, w.Seat, w.MatchID
			s.log.Info("seated", "match", w.MatchID, "seat", w.Seat, "reconnect", w.Reconnect)
			s.bot.OnWelcome(w)
		case *refereev1.PlayResponse_Refusal:
			r := kind.Refusal
			if s.seat >= 0 && r.GetReason() == refereev1.RefusalReason_REFUSAL_REASON_MATCH_OVER {
				s.log.Info("the match ended while the bot was away")
				return &Outcome{Seat: s.seat, MatchID: s.matchID}, seated, nil
			}
			return nil, seated, &RefusedError{Reason: r.GetReason(), Message: r.GetMessage(), SupportedVersions: r.GetSupportedVersions()}
		case *refereev1.PlayResponse_Snapshot:
			s.bot.OnSnapshot(NewSnapshot(kind.Snapshot))
		case *refereev1.PlayResponse_Prompt:
			prompt = NewPrompt(kind.Prompt)
			if err := send(ActionRequest(prompt.TurnID, s.decide(ctx, prompt, received))); err != nil {
				return nil, seated, err
			}
		case *refereev1.PlayResponse_Result:
			r := NewResult(kind.Result)
			if r.Accepted {
				continue
			}
			s.log.Warn("action rejected", "turn", r.TurnID, "reason", r.Reason, "message", r.Message, "attempts_left", r.AttemptsLeft)
			if prompt != nil && r.TurnID == prompt.TurnID && r.AttemptsLeft > 0 {
				prompt.AttemptsLeft = r.AttemptsLeft
				if err := send(ActionRequest(prompt.TurnID, s.bot.OnRejected(prompt, r))); err != nil {
					return nil, seated, err
				}
			}
		case *refereev1.PlayResponse_Event:
			s.bot.OnEvent(kind.Event)
			if ended := kind.Event.GetMatchEnded(); ended != nil {
				return &Outcome{Seat: s.seat, MatchID: s.matchID, Ended: ended}, seated, nil
			}
		}
	}
}

// AnswerBy is when the runner stops waiting for Choose: the prompt's deadline (or,
// if earlier, the receive time plus the turn limit, which guards against a local clock
// that runs behind the referee's), plus the time bank, minus margin.
func AnswerBy(p *Prompt, received time.Time, margin time.Duration) time.Time {
	d := p.Deadline
	if p.TurnTime > 0 {
		if local := received.Add(p.TurnTime); d.IsZero() || local.Before(d) {
			d = local
		}
	}
	if d.IsZero() {
		d = received
	}
	return d.Add(p.TimeBank - margin)
}

// decide asks the bot, and falls back when it does not answer in time (or panics).
func (s *session) decide(ctx context.Context, p *Prompt, received time.Time) Choice {
	margin := s.opts.DeadlineMargin
	if margin <= 0 {
		margin = DefaultDeadlineMargin
	}
	fallback := Fallback(p) // before Choose may touch p
	dctx, cancel := context.WithDeadline(ctx, AnswerBy(p, received, margin))
	defer cancel()
	done := make(chan Choice, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("Choose panicked; sending the fallback", "turn", p.TurnID, "panic", r)
				done <- fallback
			}
		}()
		done <- s.bot.Choose(dctx, p)
	}()
	select {
	case c := <-done:
		return c
	case <-dctx.Done():
		s.log.Warn("Choose ran out of time; sending the fallback", "turn", p.TurnID)
		return fallback
	}
}
