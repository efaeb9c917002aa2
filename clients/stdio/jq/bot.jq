# The message loop and the strategy of jq/bot.sh, run by one jq process for the whole
# match (jq -nr --unbuffered --argjson misbehave BOOL -f bot.jq). Each input is one line
# from the referee's bridge, one message of the Play stream; each output is one answer
# line, the cards ("5D 5C") or "pass". Your strategy goes in `choose`.

# The weakest legal play that beats the table; on a lead, the weakest play of the most
# cards that sheds the lowest card (legal_plays come weakest first, the hand ascending).
def choose:
  (.legal_plays // []) as $plays
  | if ($plays | length) == 0 then "pass"
    elif (.is_lead // false) | not then $plays[0].cards | join(" ")
    else .hand[0] as $low
      | ([$plays[] | select(.cards | index([$low]))] | if length > 0 then . else $plays end)
      | (map(.cards | length) | max) as $most
      | first(.[] | select((.cards | length) == $most)) | .cards | join(" ")
    end;

# After a rejection: a pass when allowed, else the weakest legal play.
def fallback:
  if (.can_pass // false) or ((.legal_plays // []) | length) == 0 then "pass"
  else .legal_plays[0].cards | join(" ") end;

# The first card of the deck (3C 3S 3H 3D 4C ...) that the hand does not hold.
def not_held:
  .hand as $hand
  | first("3456789TJQKA2" | split("")[] as $r | "CSHD" | split("")[] as $s | $r + $s
          | select(. as $c | $hand | index([$c]) | not));

# The state between lines: the last prompt (for retries) and the hand that --misbehave
# last spoiled. A line's answer, if it has one, is the state's `answer`.
foreach inputs as $msg (
  {prompt: null, seen: 0, answer: null};
  .answer = null
  | if $msg.prompt then
      .prompt = $msg.prompt
      | ($msg.prompt.state.hand_number // 0) as $hand
      | if $misbehave and $hand != .seen then .seen = $hand | .answer = ($msg.prompt | not_held)
        else .answer = ($msg.prompt | choose) end
    elif $msg.result then
      # Answer again only for a rejection of the current turn with attempts left.
      if ($msg.result.accepted // false | not) and ($msg.result.attempts_left // 0) > 0
         and $msg.result.turn_id == .prompt.turn_id
      then .answer = (.prompt | fallback) else . end
    else . end;
  if $msg.event.match_ended then halt
  elif $msg.refusal then "jq bot: refused: \($msg.refusal.message // "")\n" | halt_error(1)
  else .answer // empty end
)
