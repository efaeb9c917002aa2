package pusoy

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRaisedLineNamesTheTurnTheCallAndThePanic(t *testing.T) {
	if RaisedMarker != "PUSOY_BOT_RAISED" {
		t.Fatalf("marker %q", RaisedMarker)
	}
	got := RaisedLine(14, "choose", errors.New("runtime error: integer divide by zero"))
	want := "PUSOY_BOT_RAISED turn=14 call=choose error=panic: runtime error: integer divide by zero"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := RaisedLine(3, "on_rejected", "boom"); got != "PUSOY_BOT_RAISED turn=3 call=on_rejected error=panic: boom" {
		t.Errorf("got %q", got)
	}
}

func TestRaisedLineIsOneBoundedLine(t *testing.T) {
	got := RaisedLine(1, "choose", "x\ny\r\tz\u2028"+strings.Repeat("w", 500))
	if strings.ContainsAny(got, "\n\r\t\u2028") {
		t.Errorf("a control character in %q", got)
	}
	if !strings.HasPrefix(got, "PUSOY_BOT_RAISED turn=1 call=choose error=panic: x y  z ") {
		t.Errorf("got %q", got)
	}
	if n := utf8.RuneCountInString(strings.SplitN(got, " error=", 2)[1]); n != RaisedMaxChars {
		t.Errorf("%d characters of the error, want %d", n, RaisedMaxChars)
	}
}
