package pusoy

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

func TestActionRequestPlay(t *testing.T) {
	req := ActionRequest(12, PlayCards("9D", "9S"))
	a := req.GetAction()
	if a == nil || a.GetTurnId() != 12 {
		t.Fatalf("not an action for turn 12: %v", req)
	}
	if a.GetPass() != nil || !reflect.DeepEqual(a.GetPlay().GetCards(), []string{"9D", "9S"}) {
		t.Errorf("play action = %v", a)
	}
}

func TestActionRequestPass(t *testing.T) {
	for _, c := range []Choice{Pass, {}} {
		a := ActionRequest(5, c).GetAction()
		if a.GetTurnId() != 5 || a.GetPass() == nil || a.GetPlay() != nil {
			t.Errorf("pass action for %#v = %v", c, a)
		}
	}
}

func TestHelloRequest(t *testing.T) {
	h := HelloRequest(Options{Token: "tok", Name: "me"}).GetHello()
	if h.GetProtocolVersion() != 1 || h.GetToken() != "tok" || !h.GetWantLegalPlays() || h.GetBotName() != "me" {
		t.Errorf("hello = %v", h)
	}
	if HelloRequest(Options{NoLegalPlays: true}).GetHello().GetWantLegalPlays() {
		t.Error("NoLegalPlays still asks for legal plays")
	}
	if h.GetBatchEvents() || !HelloRequest(Options{BatchEvents: true}).GetHello().GetBatchEvents() {
		t.Error("batch_events does not follow Options.BatchEvents")
	}
}

func TestBatchEventsFromTheFlagOrTheEnvironment(t *testing.T) {
	t.Setenv("PUSOY_TOKEN", "t")
	t.Setenv("PUSOY_BATCH_EVENTS", "")
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{{nil, "", false}, {[]string{"--batch-events"}, "", true}, {nil, "1", true}, {nil, "0", false}} {
		t.Setenv("PUSOY_BATCH_EVENTS", c.env)
		o, err := ParseCommandLine("t", c.args, nil)
		if err != nil || o.BatchEvents != c.want {
			t.Errorf("%v with PUSOY_BATCH_EVENTS=%q: BatchEvents %v (%v), want %v", c.args, c.env, o.BatchEvents, err, c.want)
		}
	}
}

func TestFallback(t *testing.T) {
	plays := []Play{{Cards: []string{"4C"}}, {Cards: []string{"4C", "4S"}}}
	tests := []struct {
		name   string
		prompt Prompt
		want   Choice
	}{
		{"pass when allowed", Prompt{CanPass: true, LegalPlays: plays}, Pass},
		{"weakest legal play on a lead", Prompt{IsLead: true, LegalPlays: plays}, Choice{"4C"}},
		{"opening card without legal plays", Prompt{IsLead: true, Hand: []string{"3C", "5D"}, State: State{MustInclude: "3C"}}, Choice{"3C"}},
		{"lowest card without legal plays", Prompt{IsLead: true, Hand: []string{"6H", "7D"}}, Choice{"6H"}},
		{"pass when nothing else", Prompt{}, Pass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fallback(&tc.prompt); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Fallback = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestBaseOnRejectedSendsTheFallback(t *testing.T) {
	p := &Prompt{LegalPlays: []Play{{Cards: []string{"KD"}}}}
	if got := (Base{}).OnRejected(context.Background(), p, &Rejection{}); !reflect.DeepEqual(got, Choice{"KD"}) {
		t.Errorf("OnRejected = %v", got)
	}
}

func TestDeck(t *testing.T) {
	d := Deck()
	if len(d) != 52 || d[0] != "3C" || d[3] != "3D" || d[51] != "2D" {
		t.Errorf("deck = %v", d)
	}
	seen := map[string]bool{}
	for _, c := range d {
		seen[c] = true
	}
	if len(seen) != 52 {
		t.Errorf("deck has %d distinct cards", len(seen))
	}
}

func TestCardNotInHand(t *testing.T) {
	if got := CardNotInHand([]string{"4H"}); got != "3C" {
		t.Errorf("CardNotInHand = %s, want 3C", got)
	}
	if got := CardNotInHand([]string{"3C", "3s", "3H"}); got != "3D" {
		t.Errorf("CardNotInHand = %s, want 3D (case-insensitive)", got)
	}
	full := Deck()
	if got := CardNotInHand(full[:51]); got != "2D" {
		t.Errorf("CardNotInHand(51 cards) = %s, want 2D", got)
	}
}

type fixedBot struct {
	Base
	choice Choice
	calls  int
}

func (b *fixedBot) Choose(context.Context, *Prompt) Choice { b.calls++; return b.choice }

func TestMisbehaveOncePerHand(t *testing.T) {
	inner := &fixedBot{choice: Choice{"5S"}}
	bot := Misbehave(inner)
	prompt := func(hand int) *Prompt {
		return &Prompt{Hand: []string{"3C", "3S", "5S"}, State: State{HandNumber: hand}}
	}
	ctx := context.Background()

	first := bot.Choose(ctx, prompt(1))
	if len(first) != 1 || slices.Contains(prompt(1).Hand, first[0]) {
		t.Fatalf("first answer of hand 1 = %v, want one card not in hand", first)
	}
	if first[0] != "3H" {
		t.Errorf("misbehave card = %s, want 3H (lowest not held)", first[0])
	}
	if got := bot.Choose(ctx, prompt(1)); !reflect.DeepEqual(got, Choice{"5S"}) {
		t.Errorf("second answer of hand 1 = %v, want the bot's own", got)
	}
	if got := bot.Choose(ctx, prompt(2)); len(got) != 1 || got[0] != "3H" {
		t.Errorf("first answer of hand 2 = %v, want the misbehaving card", got)
	}
	if inner.calls != 1 {
		t.Errorf("inner bot called %d times, want 1", inner.calls)
	}
	// The hooks are the wrapped bot's: the recovery is the fallback.
	p := &Prompt{CanPass: true}
	if got := bot.OnRejected(context.Background(), p, &Rejection{}); got != nil {
		t.Errorf("OnRejected after misbehaving = %v, want pass", got)
	}
}

func TestNewBudget(t *testing.T) {
	received := time.Now() // with its monotonic reading, as the runner takes it
	wall := received.Round(0)
	margin := 50 * time.Millisecond
	due := func(b Budget) time.Duration { return b.Deadline.Sub(received) }
	p := &Prompt{Deadline: wall.Add(time.Second), TurnTime: 2 * time.Second, TimeBank: 500 * time.Millisecond}
	if got := due(NewBudget(p, received, margin, true)); got != 1450*time.Millisecond {
		t.Errorf("by the referee's deadline plus the bank: %v", got)
	}
	if got := due(NewBudget(p, received, margin, false)); got != 950*time.Millisecond {
		t.Errorf("without the bank: %v", got)
	}
	// The local clock runs 10 s behind the referee's: the turn time bounds it.
	p = &Prompt{Deadline: wall.Add(12 * time.Second), TurnTime: 2 * time.Second, TimeBank: time.Second}
	if got := due(NewBudget(p, received, margin, true)); got != 2950*time.Millisecond {
		t.Errorf("with a slow clock and a bank: %v", got)
	}
	// Ahead by 5 s: the deadline has passed; only the bank is left.
	p = &Prompt{Deadline: wall.Add(-5 * time.Second), TurnTime: time.Second, TimeBank: 500 * time.Millisecond}
	if got := due(NewBudget(p, received, margin, true)); got != 450*time.Millisecond {
		t.Errorf("with a fast clock: %v", got)
	}
	if got := due(NewBudget(&Prompt{}, received, margin, true)); got != DefaultTurnTime-margin {
		t.Errorf("without clocks: %v", got)
	}
}

func TestOutcomePlace(t *testing.T) {
	o := &Outcome{Seat: 2, Ended: &refereev1.MatchEnded{Standings: []*refereev1.Standing{
		{Place: 1, Seats: []uint32{0, 2}}, {Place: 2, Seats: []uint32{1, 3}},
	}}}
	if o.Place() != 1 {
		t.Errorf("place = %d", o.Place())
	}
	if (&Outcome{Seat: 1}).Place() != 0 {
		t.Error("place without standings is not 0")
	}
}

func TestBackoffDoublesToItsCapAndStaysThere(t *testing.T) {
	want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
		400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := backoffDelay(i + 1); got != w {
			t.Errorf("backoffDelay(%d) = %v, want %v", i+1, got, w)
		}
	}
	// A referee unreachable for the whole reconnect window: hundreds of retries.
	for retries := 1; retries <= 1000; retries++ {
		if d := backoffDelay(retries); d <= 0 || d > maxBackoff {
			t.Fatalf("backoffDelay(%d) = %v, outside (0, %v]", retries, d, maxBackoff)
		}
	}
}
