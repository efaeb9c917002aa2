package pusoy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/timestamppb"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

// A fake referee: each Play stream runs the next script (the last one repeats).
type script func(s refereev1.PlayService_PlayServer) error

type fakeReferee struct {
	refereev1.UnimplementedPlayServiceServer
	mu      sync.Mutex
	scripts []script
	streams int
}

func (f *fakeReferee) Play(s refereev1.PlayService_PlayServer) error {
	f.mu.Lock()
	i := min(f.streams, len(f.scripts)-1)
	f.streams++
	f.mu.Unlock()
	return f.scripts[i](s)
}

func (f *fakeReferee) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams
}

func startFake(t *testing.T, scripts ...script) (refereev1.PlayServiceClient, *fakeReferee) {
	t.Helper()
	fake := &fakeReferee{scripts: scripts}
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	refereev1.RegisterPlayServiceServer(srv, fake)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return refereev1.NewPlayServiceClient(conn), fake
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testOptions() Options {
	return Options{Address: "fake", Token: "tok-1", Name: "test-bot", Logger: quiet(), ReconnectWindow: 2 * time.Second}
}

// Script helpers: they report through errors, since scripts run off the test goroutine.

func recvHello(s refereev1.PlayService_PlayServer) (*refereev1.Hello, error) {
	req, err := s.Recv()
	if err != nil {
		return nil, err
	}
	if req.GetHello() == nil {
		return nil, fmt.Errorf("first message is not a hello: %v", req)
	}
	return req.GetHello(), nil
}

func recvAction(s refereev1.PlayService_PlayServer) (*refereev1.Action, error) {
	req, err := s.Recv()
	if err != nil {
		return nil, err
	}
	if req.GetAction() == nil {
		return nil, fmt.Errorf("not an action: %v", req)
	}
	return req.GetAction(), nil
}

func seat(s refereev1.PlayService_PlayServer, reconnect bool) error {
	if err := s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Welcome{Welcome: &refereev1.Welcome{
		Seat: 1, MatchId: "match-1", ProtocolVersion: 1, Reconnect: reconnect,
	}}}); err != nil {
		return err
	}
	return s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Snapshot{Snapshot: &refereev1.Snapshot{
		State: &refereev1.PublicState{MatchId: "match-1"}, Hand: []string{"3C", "3S", "7H"},
	}}})
}

func refuse(s refereev1.PlayService_PlayServer, r refereev1.RefusalReason) error {
	return s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Refusal{Refusal: &refereev1.Refusal{
		Reason: r, Message: r.String(), SupportedVersions: []uint32{1},
	}}})
}

func prompt(s refereev1.PlayService_PlayServer, p *refereev1.TurnPrompt) error {
	return s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Prompt{Prompt: p}})
}

func result(s refereev1.PlayService_PlayServer, turn uint64, accepted bool, left uint32) error {
	r := &refereev1.ActionResult{TurnId: turn, Accepted: accepted, AttemptsLeft: left}
	if !accepted {
		r.Reason = refereev1.RejectionReason_REJECTION_REASON_CARD_NOT_IN_HAND
	}
	return s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Result{Result: r}})
}

func matchEnded(s refereev1.PlayService_PlayServer) error {
	return s.Send(&refereev1.PlayResponse{Kind: &refereev1.PlayResponse_Event{Event: &refereev1.Event{
		Kind: &refereev1.Event_MatchEnded{MatchEnded: &refereev1.MatchEnded{
			Status:    refereev1.MatchStatus_MATCH_STATUS_FINISHED,
			Standings: []*refereev1.Standing{{Place: 1, Seats: []uint32{1}}, {Place: 2, Seats: []uint32{0, 2, 3}}},
		}},
	}}})
}

func leadPrompt(turn uint64, hand uint32, deadline time.Time) *refereev1.TurnPrompt {
	return &refereev1.TurnPrompt{
		TurnId: turn, Seat: 1, Deadline: timestamppb.New(deadline), TurnTimeMs: uint32(time.Until(deadline).Milliseconds()),
		Hand:       []string{"3C", "3S", "7H"},
		LegalPlays: []*refereev1.Play{{Cards: []string{"3C"}}, {Cards: []string{"3C", "3S"}}},
		IsLead:     true, AttemptsLeft: 3,
		State: &refereev1.PublicState{MatchId: "match-1", HandNumber: hand, MustInclude: "3C"},
	}
}

func steps(fns ...func() error) error {
	for _, f := range fns {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// recordingBot plays the strongest legal play and records what the runner told it.
type recordingBot struct {
	Base
	mu        sync.Mutex
	welcomes  []*Welcome
	snapshots []*Snapshot
	events    int
}

func (b *recordingBot) Choose(_ context.Context, p *Prompt) Choice {
	return PlayCards(p.LegalPlays[len(p.LegalPlays)-1].Cards...)
}
func (b *recordingBot) OnWelcome(w *Welcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.welcomes = append(b.welcomes, w)
}
func (b *recordingBot) OnSnapshot(s *Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.snapshots = append(b.snapshots, s)
}
func (b *recordingBot) OnEvent(*refereev1.Event) { b.mu.Lock(); b.events++; b.mu.Unlock() }

func TestRunPlaysRecoversFromARejectionAndEnds(t *testing.T) {
	var hello *refereev1.Hello
	var actions []*refereev1.Action
	client, _ := startFake(t, func(s refereev1.PlayService_PlayServer) error {
		take := func() error {
			a, err := recvAction(s)
			actions = append(actions, a)
			return err
		}
		return steps(
			func() (err error) { hello, err = recvHello(s); return },
			func() error { return seat(s, false) },
			func() error { return prompt(s, leadPrompt(1, 1, time.Now().Add(2*time.Second))) },
			take, // the misbehaving card
			func() error { return result(s, 1, false, 2) },
			take, // the fallback
			func() error { return result(s, 1, true, 0) },
			func() error { return prompt(s, leadPrompt(2, 1, time.Now().Add(2*time.Second))) },
			take, // the bot's own choice
			func() error { return result(s, 2, true, 0) },
			func() error { return matchEnded(s) },
		)
	})
	bot := &recordingBot{}
	out, err := RunWithClient(context.Background(), Misbehave(bot), client, testOptions())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Seat != 1 || out.MatchID != "match-1" || out.Ended == nil || out.Place() != 1 {
		t.Errorf("outcome = %+v, place %d", out, out.Place())
	}
	if hello.GetProtocolVersion() != 1 || hello.GetToken() != "tok-1" || !hello.GetWantLegalPlays() || hello.GetBotName() != "test-bot" {
		t.Errorf("hello = %v", hello)
	}
	if len(actions) != 3 {
		t.Fatalf("got %d actions, want 3", len(actions))
	}
	if c := actions[0].GetPlay().GetCards(); len(c) != 1 || slices.Contains([]string{"3C", "3S", "7H"}, c[0]) {
		t.Errorf("first action = %v, want one card not in hand", actions[0])
	}
	if c := actions[1].GetPlay().GetCards(); actions[1].GetTurnId() != 1 || !reflect.DeepEqual(c, []string{"3C"}) {
		t.Errorf("retry = %v, want the fallback 3C for turn 1", actions[1])
	}
	if c := actions[2].GetPlay().GetCards(); actions[2].GetTurnId() != 2 || !reflect.DeepEqual(c, []string{"3C", "3S"}) {
		t.Errorf("second turn = %v, want the bot's choice 3C 3S", actions[2])
	}
	if len(bot.welcomes) != 1 || len(bot.snapshots) != 1 || bot.events != 1 {
		t.Errorf("hooks: %d welcomes, %d snapshots, %d events", len(bot.welcomes), len(bot.snapshots), bot.events)
	}
	if !reflect.DeepEqual(bot.snapshots[0].Hand, []string{"3C", "3S", "7H"}) {
		t.Errorf("snapshot hand = %v", bot.snapshots[0].Hand)
	}
}

func TestRunReconnectsWithTheSameToken(t *testing.T) {
	var mu sync.Mutex
	var tokens []string
	hello := func(s refereev1.PlayService_PlayServer) error {
		h, err := recvHello(s)
		mu.Lock()
		tokens = append(tokens, h.GetToken())
		mu.Unlock()
		return err
	}
	client, fake := startFake(t,
		// Seated, prompted, then the referee closes the stream (as in the drill).
		func(s refereev1.PlayService_PlayServer) error {
			return steps(func() error { return hello(s) }, func() error { return seat(s, false) },
				func() error { return prompt(s, leadPrompt(1, 1, time.Now().Add(time.Second))) })
		},
		// The referee has not noticed the drop yet.
		func(s refereev1.PlayService_PlayServer) error {
			return steps(func() error { return hello(s) },
				func() error { return refuse(s, refereev1.RefusalReason_REFUSAL_REASON_SEAT_TAKEN) })
		},
		// A transport failure.
		func(s refereev1.PlayService_PlayServer) error {
			if err := hello(s); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "going away")
		},
		// Back in the seat until the end.
		func(s refereev1.PlayService_PlayServer) error {
			return steps(func() error { return hello(s) }, func() error { return seat(s, true) },
				func() error { return matchEnded(s) })
		},
	)
	bot := &recordingBot{}
	start := time.Now()
	out, err := RunWithClient(context.Background(), bot, client, testOptions())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Ended == nil || fake.count() != 4 {
		t.Errorf("outcome %+v after %d streams, want the match end after 4", out, fake.count())
	}
	if !reflect.DeepEqual(tokens, []string{"tok-1", "tok-1", "tok-1", "tok-1"}) {
		t.Errorf("tokens = %v", tokens)
	}
	if len(bot.welcomes) != 2 || !bot.welcomes[1].Reconnect {
		t.Errorf("welcomes = %v", bot.welcomes)
	}
	// Immediate, then 50 ms and 100 ms back-offs (with jitter, under 2x): about 0.3 s
	// at most, with room for a busy machine.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("reconnecting took %v", d)
	}
}

func TestRunEndsCleanlyWhenTheMatchEndedWhileAway(t *testing.T) {
	client, _ := startFake(t,
		func(s refereev1.PlayService_PlayServer) error {
			return steps(func() error { _, err := recvHello(s); return err }, func() error { return seat(s, false) })
		},
		func(s refereev1.PlayService_PlayServer) error {
			return steps(func() error { _, err := recvHello(s); return err },
				func() error { return refuse(s, refereev1.RefusalReason_REFUSAL_REASON_MATCH_OVER) })
		},
	)
	out, err := RunWithClient(context.Background(), &recordingBot{}, client, testOptions())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Seat != 1 || out.MatchID != "match-1" || out.Ended != nil || out.Place() != 0 {
		t.Errorf("outcome = %+v", out)
	}
	if code := report(io.Discard, io.Discard, Options{}, func() (*Outcome, error) { return out, err }); code != ExitOK {
		t.Errorf("exit code %d, want %d", code, ExitOK)
	}
}

func TestRunRefusals(t *testing.T) {
	for _, reason := range []refereev1.RefusalReason{
		refereev1.RefusalReason_REFUSAL_REASON_BAD_TOKEN,
		refereev1.RefusalReason_REFUSAL_REASON_VERSION_NOT_SUPPORTED,
		refereev1.RefusalReason_REFUSAL_REASON_MATCH_OVER, // never seated: a refusal
	} {
		t.Run(reason.String(), func(t *testing.T) {
			client, fake := startFake(t, func(s refereev1.PlayService_PlayServer) error {
				return steps(func() error { _, err := recvHello(s); return err }, func() error { return refuse(s, reason) })
			})
			_, err := RunWithClient(context.Background(), &recordingBot{}, client, testOptions())
			var refused *RefusedError
			if !errors.As(err, &refused) || refused.Reason != reason {
				t.Fatalf("err = %v, want a %s refusal", err, reason)
			}
			if fake.count() != 1 {
				t.Errorf("%d streams, want no retry", fake.count())
			}
			if code := report(io.Discard, io.Discard, Options{}, func() (*Outcome, error) { return nil, err }); code != ExitRefused {
				t.Errorf("exit code %d, want %d", code, ExitRefused)
			}
		})
	}
}

func TestRunGivesUpWhenTheRefereeIsUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	opts := testOptions()
	opts.Address, opts.ReconnectWindow = addr, 300*time.Millisecond
	start := time.Now()
	_, err = Run(context.Background(), &recordingBot{}, opts)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
	if code := report(io.Discard, io.Discard, Options{}, func() (*Outcome, error) { return nil, err }); code != ExitUnreachable {
		t.Errorf("exit code %d, want %d", code, ExitUnreachable)
	}
}

// slowBot answers too late: it waits for ctx, then a little more.
type slowBot struct{ Base }

func (slowBot) Choose(ctx context.Context, _ *Prompt) Choice {
	<-ctx.Done()
	time.Sleep(200 * time.Millisecond)
	return Choice{"7H"}
}

// panickyBot has a bug.
type panickyBot struct{ Base }

func (panickyBot) Choose(context.Context, *Prompt) Choice { panic("bug") }

func TestRunSendsTheFallbackInTime(t *testing.T) {
	for name, bot := range map[string]Bot{"slow": slowBot{}, "panicking": panickyBot{}} {
		t.Run(name, func(t *testing.T) {
			var action *refereev1.Action
			var answered, deadline time.Time
			client, _ := startFake(t, func(s refereev1.PlayService_PlayServer) error {
				deadline = time.Now().Add(400 * time.Millisecond)
				return steps(
					func() error { _, err := recvHello(s); return err },
					func() error { return seat(s, false) },
					func() error { return prompt(s, leadPrompt(1, 1, deadline)) },
					func() (err error) { action, err = recvAction(s); answered = time.Now(); return },
					func() error { return matchEnded(s) },
				)
			})
			opts := testOptions()
			opts.DeadlineMargin = 150 * time.Millisecond // room for a busy machine
			if _, err := RunWithClient(context.Background(), bot, client, opts); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !reflect.DeepEqual(action.GetPlay().GetCards(), []string{"3C"}) {
				t.Errorf("answer = %v, want the fallback 3C", action)
			}
			if answered.After(deadline) {
				t.Errorf("answered %v after the deadline", answered.Sub(deadline))
			}
		})
	}
}

func TestRunValidatesOptions(t *testing.T) {
	if _, err := Run(context.Background(), &recordingBot{}, Options{Address: "x"}); err == nil {
		t.Error("no error without a token")
	}
	if _, err := Run(context.Background(), &recordingBot{}, Options{Token: "x"}); err == nil {
		t.Error("no error without an address")
	}
}
