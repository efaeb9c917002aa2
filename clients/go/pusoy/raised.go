package pusoy

import (
	"fmt"
	"strings"
	"unicode"
)

// RaisedMarker is the first word of the line the runner writes to stderr when the bot's
// own code panics on a turn (Choose or OnRejected) and the fallback goes out instead
// (docs/kits.md, section 5): the referee finds it in the bot's output and names it.
const RaisedMarker = "PUSOY_BOT_RAISED"

// RaisedMaxChars is how many characters of what was raised the marker line keeps.
const RaisedMaxChars = 200

// RaisedLine is the marker line for a panic with value v in the bot's call ("choose" or
// "on_rejected") on turn turnID: one line, "panic: " and the value, control characters
// made spaces, at most RaisedMaxChars characters of it.
func RaisedLine(turnID uint64, call string, v any) string {
	shown := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, "panic: "+fmt.Sprint(v))
	if runes := []rune(shown); len(runes) > RaisedMaxChars {
		shown = string(runes[:RaisedMaxChars])
	}
	return fmt.Sprintf("%s turn=%d call=%s error=%s", RaisedMarker, turnID, call, shown)
}
