#!/usr/bin/env python3
"""A stdio bot in Python with the standard library only: no gRPC, no referee package.

    referee match --bot "stdio:python3 examples/stdio_bot.py" --bot greedy --bot random --bot greedy

Each line on stdin is one message of the Play stream as JSON (docs/protocol.md, section 8);
answer each prompt, and each rejection of the current turn that leaves attempts, with one
line: the cards ("5D 5C") or "pass". It plays like the built-in greedy bot.
"""

import json
import sys


def choose(prompt):
    """The weakest play that beats the table; on a lead, the longest that sheds the lowest
    card. The referee lists legal_plays weakest first and the hand in ascending order."""
    plays = [p["cards"] for p in prompt.get("legal_plays", [])]  # absent when empty
    if not plays:
        return "pass"
    if not prompt.get("is_lead"):
        return " ".join(plays[0])
    with_lowest = [p for p in plays if prompt["hand"][0] in p] or plays
    return " ".join(max(with_lowest, key=len))  # max keeps the first of the longest


def main():
    prompt = {}
    for line in sys.stdin:
        msg = json.loads(line)
        if "prompt" in msg:
            prompt = msg["prompt"]
            print(choose(prompt), flush=True)
        elif "result" in msg:
            result = msg["result"]
            if (
                not result.get("accepted")
                and result.get("attempts_left", 0) > 0
                and result["turn_id"] == prompt.get("turn_id")
            ):
                print("rejected:", result.get("message"), file=sys.stderr)
                safe = prompt.get("can_pass") or not prompt.get("legal_plays")
                print("pass" if safe else " ".join(prompt["legal_plays"][0]["cards"]), flush=True)
        elif "match_ended" in msg.get("event", {}) or "refusal" in msg:
            return


if __name__ == "__main__":
    main()
