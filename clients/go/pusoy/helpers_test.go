package pusoy

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	refereev1 "github.com/pusoy-referee/pusoy-referee/clients/go/gen/refereev1"
)

var conformance = filepath.Join("..", "..", "conformance")

func readLines(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join(conformance, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, slices.Clone(sc.Bytes()))
	}
	return out
}

func TestComparatorGivesTheReferenceJudgesVerdicts(t *testing.T) {
	type judgeCase struct {
		Rules struct {
			SuitOrder                    string `json:"suit_order"`
			Straights                    string `json:"straights"`
			FiveCardCategories           string `json:"five_card_categories"`
			FiveCardHands                bool   `json:"five_card_hands"`
			LowestStraightBeatsStraights bool   `json:"lowest_straight_beats_straights"`
			Bomb                         bool   `json:"bomb"`
		} `json:"rules"`
		Revolution  bool     `json:"revolution"`
		Table       []string `json:"table"`
		Play        []string `json:"play"`
		Legal       bool     `json:"legal"`
		Combination *string  `json:"combination"`
	}
	lines := readLines(t, "judge_cases.jsonl")
	if len(lines) < 1000 {
		t.Fatalf("only %d cases", len(lines))
	}
	for _, line := range lines {
		var c judgeCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		r := Rules(c.Rules)
		combo, ok := r.Classify(c.Play, c.Revolution)
		want := ""
		if c.Combination != nil {
			want = *c.Combination
		}
		if combo.Kind != want || ok != (c.Combination != nil) {
			t.Fatalf("Classify(%s) = %q, want %q", line, combo.Kind, want)
		}
		if c.Table != nil && ok {
			if got := r.Beats(c.Play, c.Table, c.Revolution); got != c.Legal {
				t.Fatalf("Beats(%s) = %v", line, got)
			}
		}
		if c.Table == nil && ok != c.Legal {
			t.Fatalf("lead %s: classified %v", line, ok)
		}
	}
}

func TestTrackerMatchesThePublicStateOfEveryPrompt(t *testing.T) {
	trackers := map[string]*Tracker{}
	checked := 0
	for _, line := range readLines(t, "tracker_streams.jsonl") {
		var rec struct {
			Stream  string          `json:"stream"`
			Kind    string          `json:"kind"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		tr := trackers[rec.Stream]
		if tr == nil {
			tr = NewTracker()
			trackers[rec.Stream] = tr
		}
		switch rec.Kind {
		case "welcome":
			var m refereev1.Welcome
			must(t, protojson.Unmarshal(rec.Message, &m))
			tr.OnWelcome(NewWelcome(&m))
		case "snapshot":
			var m refereev1.Snapshot
			must(t, protojson.Unmarshal(rec.Message, &m))
			tr.OnSnapshot(NewSnapshot(&m))
		case "event":
			var m refereev1.Event
			must(t, protojson.Unmarshal(rec.Message, &m))
			tr.OnEvent(&m)
		case "prompt":
			var m refereev1.TurnPrompt
			must(t, protojson.Unmarshal(rec.Message, &m))
			p := NewPrompt(&m)
			st := p.State
			var table []string
			if st.Table != nil {
				table = st.Table.Cards
			}
			type view struct {
				Hand, Played, Table []string
				Counts, Totals      []int
				TableSeat, HandNo   int
				Locked              []bool
				Revolution          bool
				Trick               []string
			}
			trick := func(ts []TrickPlay) []string {
				var out []string
				for _, x := range ts {
					if x.Pass {
						out = append(out, string(rune('0'+x.Seat))+":pass")
					} else {
						out = append(out, string(rune('0'+x.Seat))+":"+joinCards(x.Play.Cards))
					}
				}
				return out
			}
			got := view{tr.Hand, tr.PlayedCards, tr.Table, tr.CardCounts, tr.Totals, tr.TableSeat, tr.HandNumber, tr.LockedOut, tr.Revolution, trick(tr.Trick)}
			want := view{p.Hand, st.PlayedCards, table, st.CardCounts, st.Totals, st.TableSeat, st.HandNumber, st.LockedOut, st.Revolution, trick(st.Trick)}
			if !reflect.DeepEqual(norm(got), norm(want)) {
				t.Fatalf("%s turn %d:\n got %+v\nwant %+v", rec.Stream, p.TurnID, got, want)
			}
			checked++
		}
	}
	if len(trackers) != 3 || checked < 100 {
		t.Fatalf("%d streams, %d prompts checked", len(trackers), checked)
	}
}

func joinCards(cs []string) string { return strings.Join(cs, " ") }

// norm makes nil and empty slices equal.
func norm(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), "null", "[]")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
