"""A real language model at the table, end to end: a real local model (Gemma 3 270M)
behind a real OpenAI-compatible server (llama-cpp-python's), seated by ``referee match``
(``--bot llm:SETTINGS``) against three built-in bots over real gRPC, its log signed and
verified with its trace, its replay page opened in a real browser.

- constrained (the server's JSON-schema output, the legal moves only): at least 10 of
  the model's moves accepted as it answered them;
- unconstrained (no list of legal moves; the server keeps only the answer's form, one to
  five card names or a pass, so that the 270M model answers in the format while its
  move is its own): at least one illegal answer sent back to the model with the
  referee's reason, and answered again.

Each match has a wall-time limit (``MATCH_LIMIT_S``); the model answers in about a
second a move on this 2-core machine, the server starts in a few seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama import MODEL_ALIAS, llama_server
from referee_cli import run_referee

MATCH_LIMIT_S = 240
"""One match, the model's every move included, on a loaded machine."""
CHROMIUM = Path("/usr/bin/chromium")
SEED = "llm-e2e-9"
"""The model's seat 0 holds 3C: it leads the first trick (a pass there is illegal)."""


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_server(log) as url:
        yield url


def model_settings(folder: Path, url: str, **tables: dict[str, Any]) -> Path:
    def value(v: Any) -> str:
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()

    lines = ['name = "gemma"']
    base: dict[str, dict[str, Any]] = {
        "endpoint": {"url": url, "model": MODEL_ALIAS, "temperature": 0.0, "seed": 7},
        "limits": {"max_tokens_per_move": 40},
        "clock": {"turn_time_ms": 60000},
    }
    for name, keys in tables.items():
        base.setdefault(name, {}).update(keys)
    for name, keys in base.items():
        lines.append(f"[{name}]")
        lines += [f"{k} = {value(v)}" for k, v in keys.items()]
    path = folder / "gemma.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def play(folder: Path, settings: Path, *flags: str) -> tuple[Path, float, str]:
    started = time.monotonic()
    done = run_referee(
        "match",
        *("--bot", f"llm:{settings}", "--bot", "greedy", "--bot", "greedy", "--bot", "random"),
        *("--log-dir", str(folder / "logs"), "--state-dir", str(folder / "state")),
        *("--profile", "pusoy-dos", "--seed", SEED, *flags),
        timeout=MATCH_LIMIT_S,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    [log] = (folder / "logs").glob("*.jsonl")
    return log, took, done.stdout


def entries(log: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in log.read_text().splitlines() if '"trailer"' not in line[:12]
    ]


def trace(log: Path, seat: int = 0) -> list[dict[str, Any]]:
    path = log.with_name(f"{log.stem}.seat{seat}.trace.ndjson")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_constrained_the_models_moves_are_accepted_as_it_answers(endpoint, tmp_path):
    settings = model_settings(
        tmp_path,
        endpoint,
        endpoint={"structured": "json_object"},
        prompt={"legal_plays": "none"},  # the schema holds them: a shorter prompt, faster
    )
    log, took, out = play(tmp_path, settings, "--hands", "2")
    events = [e["event"] for e in entries(log)]
    rejected_turns = {
        e["action_rejected"]["turn_id"]
        for e in events
        if e.get("action_rejected", {}).get("seat", 0) == 0 and "action_rejected" in e
    }
    accepted = [
        e.get("played") or e.get("passed")
        for e in events
        if ("played" in e or "passed" in e)
        and (e.get("played") or e.get("passed")).get("seat", 0) == 0
    ]
    own = [m for m in accepted if not m.get("default_cause") and m["turn_id"] not in rejected_turns]
    assert len(own) >= 10, f"{len(own)} moves accepted as answered in {took:.0f} s:\n{out}"
    lines = trace(log)
    assert all(r["source"] == "model" for r in lines)
    assert {c["parse"] for r in lines for c in r["calls"]} == {"json"}
    assert "model gemma-3-270m" in out and "clean hands" in out
    verify = run_referee("verify", str(log), timeout=60)
    assert verify.returncode == 0 and "each bound to its action" in verify.stdout, verify.stdout
    page = tmp_path / "page.html"
    view = run_referee("view", str(log), "-o", str(page), timeout=60)
    assert view.returncode == 0, view.stderr
    said = lines[0]["calls"][-1]["answer"]
    shown = page_text_at_models_move(page, lines[0], events)
    assert said.strip()[:30] in shown and "It saw" in shown and "It said" in shown


def page_text_at_models_move(page: Path, line: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """The move panel's text at the model's first move, in a real browser."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: ./scripts/system-packages installs it")
    moves = [e for e in events if "played" in e or "passed" in e]
    k = next(
        i
        for i, e in enumerate(moves, 1)
        if (e.get("played") or e.get("passed"))["turn_id"] == str(line["turn_id"])
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"]
        )
        try:
            tab = browser.new_page()
            tab.goto(f"file://{page}#hand=1&move={k}")
            tab.wait_for_selector(".model-trace")
            return tab.inner_text("body")
        finally:
            browser.close()


def test_unconstrained_an_illegal_answer_goes_back_with_its_reason(endpoint, tmp_path):
    settings = model_settings(
        tmp_path,
        endpoint,
        endpoint={"structured": "json_object", "constrain": "format"},  # any move
        prompt={"legal_plays": "none"},
        limits={"parse_retries": 0},
    )
    log, took, out = play(tmp_path, settings, "--hands", "1", "--max-rejections", "2")
    rejections = {
        (r["turn_id"], r["attempt"]): r["message"]
        for e in entries(log)
        if (r := e["event"].get("action_rejected")) and r.get("seat", 0) == 0 and r.get("attempt")
    }
    assert rejections, f"the model made no illegal move in {took:.0f} s:\n{out}"
    lines = trace(log)
    answered_again = [
        (r, c)
        for r in lines
        for c in r["calls"]
        if c.get("feedback") in rejections.values() and "answer" in c
    ]
    assert answered_again, rejections
    _, call = answered_again[0]
    assert f"That move was not accepted: {call['feedback']}" in call["messages"][-1]["content"]
    verify = run_referee("verify", str(log), timeout=60)
    assert verify.returncode == 0 and "each bound to its action" in verify.stdout, verify.stdout
