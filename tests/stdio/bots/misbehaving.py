"""A stdio bot that misbehaves one way (argv[1]), and otherwise plays the weakest legal play.

Standard library only, as a stdio bot in any language would be. Modes:

- ``garbage``: the first answer to each prompt is one of several kinds of garbage (not
  JSON, not UTF-8, not cards, empty, a JSON object that is no Action); the retry is right;
- ``flood``: after each answer, 200 more ``pass`` lines;
- ``overlong``: the first answer in each hand is a 100 kB line; the retry is right;
- ``silent``: never reads and never answers;
- ``exit``: exits with status 3 at its second prompt;
- ``late``: answers its second prompt after ``argv[2]`` seconds, then plays on;
- ``slow``: answers every prompt after ``argv[2]`` seconds (a bot that thinks);
- ``eager``: answers each prompt with two lines at once, a card it does not hold and then
  its real answer, and never answers a rejection.
"""

from __future__ import annotations

import json
import sys
import time

GARBAGE = [
    b"{not json",
    b"\xff\xfe 3D",
    b"hello world",
    b"",
    b'{"action": {"turn_id": "1", "bogus": 1}}',
    b"[1, 2, 3]",
]


def answer(prompt: dict) -> bytes:
    plays = prompt.get("legal_plays", [])
    if prompt.get("can_pass") or not plays:
        return b"pass"
    return " ".join(plays[0]["cards"]).encode()


def main() -> int:
    mode = sys.argv[1]
    out = sys.stdout.buffer
    if mode == "silent":
        time.sleep(3600)
        return 0
    prompts = 0
    prompt: dict = {}
    hand_seen = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        lines: list[bytes] = []
        if "prompt" in msg:
            prompt = msg["prompt"]
            prompts += 1
            hand = prompt.get("state", {}).get("hand_number", 0)
            if mode == "garbage":
                lines.append(GARBAGE[(prompts - 1) % len(GARBAGE)])
            elif mode == "overlong" and hand != hand_seen:
                hand_seen = hand
                lines.append(b"3D " * 34000)
            elif mode == "exit" and prompts == 2:
                return 3
            elif mode == "eager":
                held = set(prompt["hand"])
                missing = next(r + s for r in "3456789TJQKA2" for s in "CSHD" if r + s not in held)
                lines += [missing.encode(), answer(prompt)]
            else:
                if (mode == "late" and prompts == 2) or mode == "slow":
                    time.sleep(float(sys.argv[2]))
                lines.append(answer(prompt))
                if mode == "flood":
                    lines += [b"pass"] * 200
        elif "result" in msg and mode != "eager":
            result = msg["result"]
            if (
                not result.get("accepted")
                and result.get("attempts_left", 0) > 0
                and result.get("turn_id") == prompt.get("turn_id")
            ):
                lines.append(answer(prompt))
        elif "match_ended" in msg.get("event", {}):
            return 0
        for line in lines:
            out.write(line + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
