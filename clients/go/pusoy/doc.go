// Package pusoy is the Go client library for pusoy-referee bots.
//
// Write a type that embeds Base and has one method, Choose, which turns a prompt into
// the cards to play (or Pass); Run (or Main, for a command) connects to the referee,
// says hello with the seat token, answers every prompt before its deadline, recovers
// from rejected answers through OnRejected (by default Fallback) and reconnects with
// the same token after a dropped stream.
//
//	type Lowest struct{ pusoy.Base }
//
//	func (Lowest) Choose(ctx context.Context, p *pusoy.Prompt) pusoy.Choice {
//		if len(p.LegalPlays) == 0 {
//			return pusoy.Pass
//		}
//		return pusoy.PlayCards(p.LegalPlays[0].Cards...)
//	}
//
// The generated protocol types live in package refereev1 (gen/refereev1, made by
// build.sh from ../../proto).
package pusoy
