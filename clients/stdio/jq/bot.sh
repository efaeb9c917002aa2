#!/bin/sh
# A Pusoy Dos / Big Two bot for the referee's stdio protocol: POSIX sh and jq, no gRPC.
#
#   referee match --bot "stdio:sh clients/stdio/jq/bot.sh" --bot greedy --bot random --bot greedy
#
# The referee's bridge writes one JSON object per line on stdin, one per message of the
# Play stream. Each line is compact and has exactly one key, the message's kind, so the
# kind can be told from the line's start without parsing it: '{"prompt":', '{"result":',
# '{"event":{"match_ended":'. The bot answers each prompt, and each rejection of its
# current turn that leaves attempts, with one line: the cards ("5D 5C") or "pass".
# Debug output goes to stderr. docs/protocol.md, section 8, has the whole protocol.
#
# The strategy is the jq filter CHOOSE. Option --misbehave makes the first answer of each
# hand a card the bot does not hold, to exercise the rejection path.
set -u

# The answer to a prompt, as "TURN_ID HAND_NUMBER ANSWER": one jq run per prompt (each
# run costs jq's start-up, tens of milliseconds). The strategy: the weakest legal play
# that beats the table; on a lead, the weakest play of the most cards that sheds the
# lowest card (legal_plays come weakest first, the hand in ascending order). With
# $misbehave, the first answer of each hand is the first card of the deck not held.
CHOOSE='.prompt as $p
  | ($p.legal_plays // []) as $plays
  | ($p.state.hand_number // 0 | tostring) as $hand
  | if $misbehave == "1" and $hand != $seen then
      first([range(13) as $r | range(4) as $s | "3456789TJQKA2"[$r:$r+1] + "CSHD"[$s:$s+1]][]
            | select(. as $c | $p.hand | index([$c]) | not))
    elif ($plays | length) == 0 then "pass"
    elif ($p.is_lead // false) | not then $plays[0].cards | join(" ")
    else ($p.hand[0]) as $low
      | ([$plays[] | select(.cards | index([$low]))] | if length > 0 then . else $plays end)
      | (map(.cards | length) | max) as $most
      | first(.[] | select((.cards | length) == $most)) | .cards | join(" ")
    end
  | "\($p.turn_id) \($hand) \(.)"'

# After a result: for a rejection of the current turn with attempts left, a pass when
# allowed, else the weakest legal play; nothing otherwise. Reads the result, then the prompt.
RETRY='input.result as $r | input.prompt as $p
  | select(($r.accepted // false | not) and ($r.attempts_left // 0) > 0
           and $r.turn_id == $p.turn_id)
  | if ($p.can_pass // false) or (($p.legal_plays // []) | length) == 0 then "pass"
    else $p.legal_plays[0].cards | join(" ") end'

misbehave=0
[ "${1:-}" = "--misbehave" ] && misbehave=1
prompt=''
hand_seen=''

while IFS= read -r line; do
    case $line in
    '{"prompt":'*)
        prompt=$line
        # shellcheck disable=SC2046 # split "TURN HAND CARDS..." into words on purpose
        set -- $(printf '%s\n' "$line" |
            jq -r --arg misbehave "$misbehave" --arg seen "$hand_seen" "$CHOOSE")
        hand_seen=$2
        shift 2
        echo "$*"
        ;;
    '{"result":{'*'"accepted":true'*)
        ;;
    '{"result":'*)
        echo "jq bot: rejected: $line" >&2
        printf '%s\n%s\n' "$line" "$prompt" | jq -nr "$RETRY"
        ;;
    '{"event":{"match_ended":'*)
        exit 0
        ;;
    '{"refusal":'*)
        echo "jq bot: refused: $line" >&2
        exit 1
        ;;
    esac
done
