package pusoy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// ProtocolVersion is the bot protocol version this library speaks.
const ProtocolVersion = 1

const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
	// drainTime is how long, at the match's end, the bot's last hooks may take.
	drainTime = 2 * time.Second
)

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

// RefusedError is returned when the referee refuses the seat (bad token, protocol
// version, match over before the bot was ever seated, SEAT_TAKEN past the window, ...).
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

// ErrRPC is wrapped by the error Run returns when the stream failed in a way a
// reconnect cannot fix (UNIMPLEMENTED, UNAUTHENTICATED, ...).
var ErrRPC = errors.New("the stream failed")

// Run connects bot to the referee at opts.Address, takes the seat of opts.Token and
// plays until the match ends (docs/kits.md). It reconnects with the same token within
// the reconnect window. It returns a *RefusedError when the referee refuses the seat,
// an error wrapping ErrUnreachable or ErrRPC, a *UsageError, or ctx's error.
func Run(ctx context.Context, bot Bot, opts Options) (*Outcome, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	creds, err := opts.TransportCredentials()
	if err != nil {
		return nil, err
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Let gRPC retry a refused connection within a second, as the runner does.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: minBackoff, Multiplier: 2, Jitter: 0.2, MaxDelay: maxBackoff},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	conn, err := grpc.NewClient(opts.Address, append(dial, opts.DialOptions...)...)
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("referee address %q: %v", opts.Address, err)}
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
	if s.opts.SafetyMargin <= 0 {
		s.opts.SafetyMargin = DefaultSafetyMargin
	}
	window := opts.ReconnectWindow
	if window <= 0 {
		window = DefaultReconnectWindow
	}
	s.work = newWorker()
	defer s.work.close()

	windowStart := time.Now() // from the start, then from each loss of the seat
	retries := 0
	var lastRefusal *RefusedError
	for {
		outcome, seated, err := s.playOnce(ctx)
		if outcome != nil {
			return outcome, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			if refused.Reason != refereev1.RefusalReason_REFUSAL_REASON_SEAT_TAKEN &&
				refused.Reason != refereev1.RefusalReason_REFUSAL_REASON_SHUTTING_DOWN {
				return nil, err
			}
			lastRefusal = refused
		case err == nil:
			err = errors.New("the stream ended before the match did")
		case retryable(err):
		default:
			return nil, fmt.Errorf("%w: %v", ErrRPC, err)
		}
		if seated {
			s.log.Info("lost the stream; reconnecting", "error", err)
			windowStart, retries, lastRefusal = time.Now(), 0, nil
		}
		left := window - time.Since(windowStart)
		if left <= 0 {
			if lastRefusal != nil {
				return nil, lastRefusal
			}
			return nil, fmt.Errorf("%w at %s within %s: %v", ErrUnreachable, opts.Address, window, err)
		}
		if retries > 0 {
			d := backoffDelay(retries)
			sleep := min(left, d/2+time.Duration(rand.Int64N(int64(d/2)+1))) // jitter: [d/2, d]
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(sleep):
			}
		}
		retries++
	}
}

// backoffDelay is the longest wait before the retries-th retry (from 1): doubling from
// minBackoff up to maxBackoff. The doubling stops at the cap: a shift past 37 overflows
// and once made the wait negative (a panic in rand) after ~30 s of failed retries.
func backoffDelay(retries int) time.Duration {
	d := minBackoff
	for i := 1; i < retries && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// retryable reports whether a stream error may be cured by reconnecting.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled, codes.Internal, codes.Unknown, codes.DeadlineExceeded:
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
		BatchEvents:     opts.BatchEvents,
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

// worker runs the bot's calls one at a time, in order, on one goroutine.
type worker struct {
	mu     sync.Mutex
	cond   *sync.Cond
	jobs   []func()
	closed bool
}

func newWorker() *worker {
	w := &worker{}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

func (w *worker) run() {
	for {
		w.mu.Lock()
		for len(w.jobs) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.jobs) == 0 {
			w.mu.Unlock()
			return
		}
		job := w.jobs[0]
		w.jobs = w.jobs[1:]
		w.mu.Unlock()
		job()
	}
}

func (w *worker) push(job func()) {
	w.mu.Lock()
	w.jobs = append(w.jobs, job)
	w.mu.Unlock()
	w.cond.Signal()
}

func (w *worker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cond.Signal()
}

// turn is the open turn: the attempt being answered and what was sent.
type turn struct {
	prompt   *Prompt
	fallback Choice // computed before the bot could touch the prompt
	attempt  int
	answered int // the last attempt answered, -1 for none
	closed   bool
	sent     []Choice
	timer    *time.Timer
	cancel   context.CancelFunc
}

type session struct {
	bot     Bot
	client  refereev1.PlayServiceClient
	opts    Options
	log     *slog.Logger
	work    *worker
	seat    int // -1 until the first Welcome
	matchID string

	mu   sync.Mutex // guards cur and send
	cur  *turn
	send func(*refereev1.PlayRequest)
}

// guard runs one call into the bot, recovering (and logging) a panic.
func (s *session) guard(name string, f func()) (ok bool) {
	_, ok = s.guardValue(name, f)
	return ok
}

// guardValue is guard that also gives the panic's value.
func (s *session) guardValue(name string, f func()) (panicked any, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error(name+" panicked", "panic", r, "stack", string(debug.Stack()))
			panicked, ok = r, false
		}
	}()
	f()
	return nil, true
}

func (s *session) closeTurn() {
	if t := s.cur; t != nil && !t.closed {
		t.closed = true
		if t.timer != nil {
			t.timer.Stop()
		}
		if t.cancel != nil {
			t.cancel()
		}
	}
}

// answer sends c (nil with useFallback: the fallback) for attempt of t, unless the turn
// moved on or that attempt was answered already. Called with s.mu held.
func (s *session) answer(t *turn, attempt int, c Choice, useFallback bool) {
	if t != s.cur || t.closed || t.attempt != attempt || t.answered >= attempt {
		return // late: dropped
	}
	t.answered = attempt
	if t.timer != nil {
		t.timer.Stop()
	}
	if useFallback {
		c = t.fallback
	}
	if attempt > 0 && len(t.sent) > 0 && sameCards(c, t.sent[len(t.sent)-1]) {
		return // the fallback was just rejected: the referee acts at its deadline
	}
	t.sent = append(t.sent, c)
	if s.send != nil {
		s.send(ActionRequest(t.prompt.TurnID, c))
	}
}

func sameCards(a, b Choice) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// ask runs call (Choose or OnRejected) on the worker under the turn's budget, and arms
// the timer that sends the fallback when the budget runs out first. Called with s.mu held.
func (s *session) ask(ctx context.Context, t *turn, attempt int, what string, call func(context.Context) Choice) {
	dctx, cancel := context.WithDeadline(ctx, t.prompt.Budget.Deadline)
	t.cancel = cancel
	t.timer = time.AfterFunc(t.prompt.Budget.Remaining(), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if t == s.cur && !t.closed && t.attempt == attempt && t.answered < attempt {
			s.log.Warn(what+" is past its budget; sending the fallback", "turn", t.prompt.TurnID)
			s.answer(t, attempt, nil, true)
		}
	})
	s.work.push(func() {
		defer cancel()
		s.mu.Lock()
		stale := t != s.cur || t.closed || t.attempt != attempt || t.prompt.Budget.Expired()
		s.mu.Unlock()
		if stale {
			return // no longer wanted: the bot is not asked
		}
		var c Choice
		panicked, ok := s.guardValue(what, func() { c = call(dctx) })
		if !ok {
			named := map[string]string{"Choose": "choose", "OnRejected": "on_rejected"}[what]
			stderr := s.opts.Stderr
			if stderr == nil {
				stderr = os.Stderr
			}
			fmt.Fprintln(stderr, RaisedLine(t.prompt.TurnID, named, panicked))
		}
		s.mu.Lock()
		s.answer(t, attempt, c, !ok)
		s.mu.Unlock()
	})
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
	var sendMu sync.Mutex
	send := func(req *refereev1.PlayRequest) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = stream.Send(req) // io.EOF or an error: Recv reports how the stream ended
	}
	s.mu.Lock()
	s.send = send
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.closeTurn()
		s.send = nil
		s.mu.Unlock()
	}()
	send(HelloRequest(s.opts))
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
			s.work.push(func() { s.guard("OnWelcome", func() { s.bot.OnWelcome(w) }) })
		case *refereev1.PlayResponse_Refusal:
			r := kind.Refusal
			if s.seat >= 0 && r.GetReason() == refereev1.RefusalReason_REFUSAL_REASON_MATCH_OVER {
				s.log.Info("the match ended while the bot was away")
				return &Outcome{Seat: s.seat, MatchID: s.matchID}, seated, nil
			}
			return nil, seated, &RefusedError{Reason: r.GetReason(), Message: r.GetMessage(), SupportedVersions: r.GetSupportedVersions()}
		case *refereev1.PlayResponse_Snapshot:
			snap := NewSnapshot(kind.Snapshot)
			s.work.push(func() { s.guard("OnSnapshot", func() { s.bot.OnSnapshot(snap) }) })
		case *refereev1.PlayResponse_Prompt:
			for _, ev := range kind.Prompt.GetEvents() { // batched: the bot sees them first
				s.deliver(ev)
			}
			p := NewPrompt(kind.Prompt)
			p.Budget = NewBudget(p, received, s.opts.SafetyMargin, !s.opts.NoTimeBank)
			s.mu.Lock()
			s.closeTurn()
			t := &turn{prompt: p, fallback: Fallback(p), answered: -1}
			s.cur = t
			s.ask(ctx, t, 0, "Choose", func(c context.Context) Choice { return s.bot.Choose(c, p) })
			s.mu.Unlock()
		case *refereev1.PlayResponse_Result:
			r := NewRejection(kind.Result)
			s.mu.Lock()
			t := s.cur
			switch {
			case t == nil || t.closed || r.TurnID != t.prompt.TurnID: // a stale answer's verdict
			case r.Accepted || r.AttemptsLeft <= 0:
				s.closeTurn()
			default:
				s.log.Warn("action rejected", "turn", r.TurnID, "reason", r.Reason, "message", r.Message, "attempts_left", r.AttemptsLeft)
				if t.timer != nil {
					t.timer.Stop()
				}
				t.attempt++
				s.ask(ctx, t, t.attempt, "OnRejected", func(c context.Context) Choice { return s.bot.OnRejected(c, t.prompt, r) })
			}
			s.mu.Unlock()
		case *refereev1.PlayResponse_Event:
			if ended := s.deliver(kind.Event); ended != nil {
				return s.end(ended), seated, nil
			}
		case *refereev1.PlayResponse_Batch:
			for _, ev := range kind.Batch.GetEvents() {
				if ended := s.deliver(ev); ended != nil {
					return s.end(ended), seated, nil
				}
			}
		}
	}
}

// deliver hands one event to the bot's OnEvent, live or batched alike, and closes the
// open turn on its played or passed. It returns the match's end, if it is one.
func (s *session) deliver(ev *refereev1.Event) *refereev1.MatchEnded {
	s.work.push(func() { s.guard("OnEvent", func() { s.bot.OnEvent(ev) }) })
	var id uint64
	var ends bool
	if p := ev.GetPlayed(); p != nil {
		id, ends = p.GetTurnId(), true
	} else if p := ev.GetPassed(); p != nil {
		id, ends = p.GetTurnId(), true
	}
	s.mu.Lock()
	if ends && s.cur != nil && s.cur.prompt.TurnID == id {
		s.closeTurn()
	}
	s.mu.Unlock()
	return ev.GetMatchEnded()
}

// end lets the bot's last hooks run (within drainTime) and makes the outcome.
func (s *session) end(ended *refereev1.MatchEnded) *Outcome {
	drained := make(chan struct{})
	s.work.push(func() { close(drained) })
	select {
	case <-drained:
	case <-time.After(drainTime):
	}
	return &Outcome{Seat: s.seat, MatchID: s.matchID, Ended: ended}
}
