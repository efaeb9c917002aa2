package pusoy

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

func TestNewPromptReadsEveryField(t *testing.T) {
	deadline := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	msg := &refereev1.TurnPrompt{
		TurnId:     42,
		Seat:       2,
		Deadline:   timestamppb.New(deadline),
		TurnTimeMs: 2000,
		TimeBankMs: 500,
		Hand:       []string{"3C", "4D", "9S", "9H", "2S"},
		LegalPlays: []*refereev1.Play{
			{Cards: []string{"9S"}, Combination: refereev1.Combination_COMBINATION_SINGLE},
			{Cards: []string{"2S"}, Combination: refereev1.Combination_COMBINATION_SINGLE},
		},
		CanPass:      true,
		AttemptsLeft: 3,
		IsLead:       false,
		State: &refereev1.PublicState{
			MatchId:     "m1",
			HandNumber:  4,
			Turn:        proto.Uint32(2),
			Table:       &refereev1.Play{Cards: []string{"8D"}, Combination: refereev1.Combination_COMBINATION_SINGLE},
			TableSeat:   proto.Uint32(1),
			CardCounts:  []uint32{10, 7, 5, 13},
			LockedOut:   []bool{false, false, false, true},
			Revolution:  true,
			PlayedCards: []string{"8D"},
			Trick: []*refereev1.TrickPlay{
				{Seat: 1, Play: &refereev1.Play{Cards: []string{"8D"}, Combination: refereev1.Combination_COMBINATION_SINGLE}},
				{Seat: 3, Pass: true},
			},
			Totals:   []int32{-3, 0, 7, 12},
			HandsWon: []uint32{1, 0, 2, 0},
			Strikes:  []uint32{0, 0, 1, 0},
		},
	}
	p := NewPrompt(msg)

	if p.TurnID != 42 || p.Seat != 2 || !p.Deadline.Equal(deadline) {
		t.Errorf("turn/seat/deadline = %d/%d/%v", p.TurnID, p.Seat, p.Deadline)
	}
	if p.TurnTime != 2*time.Second || p.TimeBank != 500*time.Millisecond {
		t.Errorf("clocks = %v, %v", p.TurnTime, p.TimeBank)
	}
	if !reflect.DeepEqual(p.Hand, []string{"3C", "4D", "9S", "9H", "2S"}) {
		t.Errorf("hand = %v", p.Hand)
	}
	wantPlays := []Play{
		{Cards: []string{"9S"}, Combination: refereev1.Combination_COMBINATION_SINGLE},
		{Cards: []string{"2S"}, Combination: refereev1.Combination_COMBINATION_SINGLE},
	}
	if !reflect.DeepEqual(p.LegalPlays, wantPlays) {
		t.Errorf("legal plays = %v", p.LegalPlays)
	}
	if !p.CanPass || p.IsLead || p.AttemptsLeft != 3 || p.Raw != msg {
		t.Errorf("can_pass/is_lead/attempts/raw = %v/%v/%d/%p", p.CanPass, p.IsLead, p.AttemptsLeft, p.Raw)
	}
	s := p.State
	if s.MatchID != "m1" || s.HandNumber != 4 || s.Turn != 2 || s.TableSeat != 1 || !s.Revolution {
		t.Errorf("state header = %+v", s)
	}
	if s.Table == nil || !reflect.DeepEqual(s.Table.Cards, []string{"8D"}) {
		t.Errorf("table = %v", s.Table)
	}
	if !reflect.DeepEqual(s.CardCounts, []int{10, 7, 5, 13}) || !reflect.DeepEqual(s.Totals, []int{-3, 0, 7, 12}) ||
		!reflect.DeepEqual(s.HandsWon, []int{1, 0, 2, 0}) || !reflect.DeepEqual(s.Strikes, []int{0, 0, 1, 0}) ||
		!reflect.DeepEqual(s.LockedOut, []bool{false, false, false, true}) {
		t.Errorf("per-seat state = %+v", s)
	}
	wantTrick := []TrickPlay{
		{Seat: 1, Play: Play{Cards: []string{"8D"}, Combination: refereev1.Combination_COMBINATION_SINGLE}},
		{Seat: 3, Play: Play{}, Pass: true},
	}
	if !reflect.DeepEqual(s.Trick, wantTrick) {
		t.Errorf("trick = %+v", s.Trick)
	}

	// The view is a copy: changing it leaves the message alone.
	p.Hand[0] = "XX"
	if msg.Hand[0] != "3C" {
		t.Error("the view shares the hand with the message")
	}
}

func TestNewPromptOnAFreshLead(t *testing.T) {
	p := NewPrompt(&refereev1.TurnPrompt{
		TurnId: 1,
		Hand:   []string{"3C", "5H"},
		IsLead: true,
		State:  &refereev1.PublicState{HandNumber: 1, MustInclude: "3C"},
	})
	if p.State.Table != nil || p.State.TableSeat != -1 || p.State.Turn != -1 {
		t.Errorf("fresh lead state = %+v", p.State)
	}
	if !p.IsLead || p.State.MustInclude != "3C" || len(p.LegalPlays) != 0 {
		t.Errorf("lead prompt = %+v", p)
	}
	// A prompt without a state still converts.
	if q := NewPrompt(&refereev1.TurnPrompt{TurnId: 9}); q.State.Turn != -1 || q.Deadline != (time.Time{}) {
		t.Errorf("empty prompt = %+v", q)
	}
}

func TestNewRejectionAndWelcome(t *testing.T) {
	r := NewRejection(&refereev1.ActionResult{
		TurnId: 7, Reason: refereev1.RejectionReason_REJECTION_REASON_DOES_NOT_BEAT, Message: "no", AttemptsLeft: 1,
	})
	if r.TurnID != 7 || r.Accepted || r.Reason != refereev1.RejectionReason_REJECTION_REASON_DOES_NOT_BEAT || r.AttemptsLeft != 1 {
		t.Errorf("result = %+v", r)
	}
	w := NewWelcome(&refereev1.Welcome{Seat: 3, MatchId: "m", Reconnect: true})
	if w.Seat != 3 || w.MatchID != "m" || !w.Reconnect {
		t.Errorf("welcome = %+v", w)
	}
}
