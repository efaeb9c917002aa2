#!/usr/bin/env python3
"""Make the kits' helper conformance data from the referee itself (docs/kits.md, section 8).

- ``clients/conformance/judge_cases.jsonl``: plays and tables under several rule sets,
  with the reference judge's verdict (legal, combination). Deterministic: ``--check``
  fails when the committed file differs from a fresh generation (CI runs it).
- ``clients/conformance/tracker_streams.jsonl`` (``--tracker``): every message seat 0
  receives in real matches on a real referee (a reconnect drill included), one per line.
  Each prompt's ``state`` is what a kit's state tracker must have computed by then.
  Timing makes it differ from run to run, so it is generated on demand, not checked.

    .venv/bin/python scripts/gen_kit_conformance.py [--check] [--tracker]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "python"))

from referee.rules import Rules  # noqa: E402
from referee.rules.judge import judge, moves  # noqa: E402

OUT = ROOT / "clients" / "conformance"
CASES_PER_VARIANT = 160
VARIANTS: list[tuple[str, dict[str, Any], bool]] = [
    ("pusoy-dos", {}, False),
    ("pusoy-dos-chips", {}, False),
    ("big-two", {}, False),
    ("big-two", {"revolution": True, "bomb": True}, True),
    ("pusoy-dos", {"bomb": True}, False),
    ("pusoy-dos-chips", {"bomb": True, "revolution": True}, True),
    ("pusoy-dos", {"lowest_straight_beats_straights": True}, False),
    ("big-two", {"lowest_straight_beats_straights": True, "revolution": True}, True),
    ("pusoy-dos", {"five_card_hands": False}, False),
    ("big-two", {"straights": "none-with-two", "five_card_categories": "locked"}, False),
]
RULE_FIELDS = (
    "suit_order",
    "straights",
    "five_card_categories",
    "five_card_hands",
    "lowest_straight_beats_straights",
    "bomb",
)
DECK = [r + s for r in "3456789TJQKA2" for s in "CSHD"]


def rules_json(profile: str, options: dict[str, Any]) -> dict[str, Any]:
    rules = Rules.for_profile(profile, options)
    out: dict[str, Any] = {}
    for f in RULE_FIELDS:
        value = getattr(rules, f)
        out[f] = str(value) if isinstance(value, str) else value
    return out


def judge_cases() -> list[str]:
    lines = []
    for v, (profile, options, revolution) in enumerate(VARIANTS):
        rng = random.Random(f"kits-{v}")
        rules = rules_json(profile, options)
        for _ in range(CASES_PER_VARIANT):
            deck = DECK[:]
            rng.shuffle(deck)
            a, b = deck[:13], deck[13:26]
            base = {"profile": profile, "options": options, "revolution": revolution}
            table_plays = moves({**base, "hand": " ".join(a)})["moves"]
            table = None if rng.random() < 0.2 else rng.choice(table_plays).split()
            if rng.random() < 0.75:
                answers = moves({**base, "hand": " ".join(b)})["moves"]
                same = [m for m in answers if table and len(m.split()) == len(table)]
                play = rng.choice(same if same and rng.random() < 0.8 else answers).split()
            else:
                play = rng.sample(b, rng.choice([1, 2, 2, 3, 3, 4, 5, 5, 5, 5]))
            req = {**base, "play": " ".join(play)}
            if table is not None:
                req["table"] = " ".join(table)
            verdict = judge(req)
            case = {
                "rules": rules,
                "revolution": revolution,
                "table": table,
                "play": play,
                "legal": verdict["legal"],
                "combination": verdict.get("combination"),
                "reason": verdict.get("reason"),
            }
            lines.append(json.dumps(case, separators=(",", ":")))
    return lines


async def tracker_streams() -> list[str]:
    import grpc
    from google.protobuf import json_format

    from pusoy_client import Prompt, run_bot
    from pusoy_client.samples import RandomBot
    from referee.protocol import common, match_service, match_service_grpc, play_service
    from referee.server.app import RefereeServer

    lines: list[str] = []

    class Recorder(RandomBot):
        def __init__(self, stream: str, seed: int) -> None:
            super().__init__(seed)
            self.stream = stream

        def put(self, kind: str, msg: Any) -> None:
            body = json_format.MessageToDict(msg, preserving_proto_field_name=True)
            lines.append(json.dumps({"stream": self.stream, "kind": kind, "message": body}))

        def on_welcome(self, welcome: play_service.Welcome) -> None:
            self.put("welcome", welcome)

        def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
            self.put("snapshot", snapshot)

        def on_event(self, event: common.Event) -> None:
            self.put("event", event)

        def choose(self, prompt: Prompt) -> Any:
            self.put("prompt", prompt.message)
            return super().choose(prompt)

    with tempfile.TemporaryDirectory() as tmp:
        server = RefereeServer("127.0.0.1:0", Path(tmp))
        await server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = match_service_grpc.MatchServiceStub(channel)
                for i, (profile, options) in enumerate(
                    [
                        ("pusoy-dos", {}),
                        ("pusoy-dos-chips", {"bomb": "true"}),
                        ("big-two", {"revolution": "true", "bomb": "true"}),
                    ]
                ):
                    created = await stub.CreateMatch(
                        match_service.CreateMatchRequest(
                            profile=profile,
                            options=options,
                            seed=f"tracker-{i}",
                            hands=3,
                            drills=common.Drills(disconnect_after_prompts=4),
                            time_control=common.TimeControl(reconnect_grace_ms=3000),
                        )
                    )
                    bots = [Recorder(f"{profile}-{i}", 0)] + [RandomBot(s) for s in (1, 2, 3)]
                    await asyncio.gather(
                        *(
                            run_bot(b, server.address, t)
                            for b, t in zip(bots, created.seat_tokens, strict=True)
                        )
                    )
        finally:
            await server.stop(grace=1.0)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if judge_cases.jsonl is stale")
    ap.add_argument("--tracker", action="store_true", help="also record tracker_streams.jsonl")
    args = ap.parse_args()
    text = "\n".join(judge_cases()) + "\n"
    path = OUT / "judge_cases.jsonl"
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path.relative_to(ROOT)} is out of date; run scripts/gen_kit_conformance.py")
            return 1
        print(f"{path.relative_to(ROOT)} is up to date")
        return 0
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)} ({text.count(chr(10))} cases)")
    if args.tracker:
        lines = asyncio.run(tracker_streams())
        (OUT / "tracker_streams.jsonl").write_text("\n".join(lines) + "\n")
        print(f"wrote clients/conformance/tracker_streams.jsonl ({len(lines)} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
