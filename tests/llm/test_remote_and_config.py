"""A model seat everywhere seats are named, and its settings' errors:

- ``referee llm-bot`` plays a seat of a running ``referee serve`` (a match the organiser
  created with a seat clock for it); its trace, written in its own folder, is bound to
  the referee's log and checked by ``referee verify --trace``;
- a tournament's ``builtin = "llm:..."`` and a ladder's anchors read the settings (relative
  to their own file); bad settings are one clear line, exit 2, before anything is played.
The model is a scripted endpoint here (the retries' and the wiring's tests); the real
model plays in test_real_model.py."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from referee_cli import run_referee
from referee_process import Serve
from scripted import ScriptedEndpoint, chat

from referee.ladder.config import parse_ladder_config
from referee.ladder.storage.store import house_bot_name
from referee.llm.settings import load_model_settings
from referee.tournament.config import ConfigError
from referee.tournament.toml_reader import parse_config


def write_settings(folder: Path, url: str, extra: str = "") -> Path:
    path = folder / "model.toml"
    path.write_text(
        f'name = "Remote Gemma"\n[endpoint]\nurl = "{url}"\nmodel = "m"\n{extra}'
        '[prompt]\nformat = "json"\n'
    )
    return path


def passing(body: dict) -> tuple[int, object]:
    user = next(m for m in body["messages"] if m["role"] == "user")
    view = json.loads(user["content"].split("\n\nYour move?")[0])
    plays = view.get("legal_plays") or []
    return chat(json.dumps({"play": plays[0]} if view["lead"] else {"pass": True}))


async def test_llm_bot_plays_a_seat_of_a_remote_referee_and_its_trace_verifies(tmp_path):
    serve = Serve(tmp_path)
    await asyncio.to_thread(serve.start)
    try:
        async with ScriptedEndpoint([passing]) as ep:
            model = write_settings(tmp_path, ep.url)
            made = await asyncio.to_thread(
                run_referee,
                *("organiser", "create", "--address", serve.address, "--json"),
                *("--state-dir", str(tmp_path / "state"), "--tokens-dir", str(tmp_path / "seats")),
                *("--hands", "1", "--seat-clock", "0:30000:10000"),
            )
            assert made.returncode == 0, made.stderr
            env = {**os.environ, "PUSOY_ADDRESS": serve.address}
            procs = [
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "referee.cli", "llm-bot", str(model),
                    "--token-file", str(tmp_path / "seats" / "seat-0.token"),
                    "--trace-dir", str(tmp_path / "traces"),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                )
            ] + [
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "referee.cli", "bot", "greedy",
                    "--token-file", str(tmp_path / "seats" / f"seat-{s}.token"),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                )
                for s in (1, 2, 3)
            ]  # fmt: skip
            outs = [await asyncio.wait_for(p.communicate(), 120) for p in procs]
            assert [p.returncode for p in procs] == [0, 0, 0, 0], outs
    finally:
        await asyncio.to_thread(serve.stop)
    said = outs[0][0].decode()
    assert said.startswith("Remote Gemma: match ") and "trace: " in said
    trace = Path(said.rsplit("trace: ", 1)[1].strip())
    [log] = (tmp_path / "logs").glob("*.jsonl")
    assert trace.name == f"{log.stem}.seat0.trace.ndjson"
    config = json.loads(log.read_text().splitlines()[0])["event"]["match_created"]["config"]
    assert config["time_control"]["seat_clocks"] == [{"turn_time_ms": 30000, "time_bank_ms": 10000}]
    done = await asyncio.to_thread(run_referee, "verify", str(log), "--trace", f"0={trace}")
    assert done.returncode == 0 and "each bound to its action in the log" in done.stdout, (
        done.stdout
    )
    done = await asyncio.to_thread(run_referee, "verify", str(log), "--trace", f"1={trace}")
    assert done.returncode == 1 and "FAILED: trace of seat 1" in done.stdout


def test_a_token_on_the_command_line_is_refused(tmp_path):
    model = write_settings(tmp_path, "http://127.0.0.1:9/v1")
    done = run_referee("llm-bot", str(model), "--token", "abc")
    assert done.returncode == 64 and "--token is not taken" in done.stderr


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('api_key = "sk-1"\n', "endpoint.api_key: the key is not kept in the settings"),
        ('api_key_file = "k"\napi_key_env = "K"\n', "not both"),
        ('structured = "yes"\n', "endpoint.structured: 'yes' is not one of"),
        ('colour = "red"\n', "colour"),
        ("[limits]\npause_s = -1\n", "limits.pause_s: should be at least 0"),
        ("[limits]\npause_after_failures = 1.5\n", "limits.pause_after_failures"),
    ],
)
def test_bad_settings_are_one_line_naming_the_key(tmp_path, extra, problem):
    model = write_settings(tmp_path, "http://127.0.0.1:9/v1", extra)
    with pytest.raises(ConfigError, match=problem.split(":")[0]):
        load_model_settings(model)
    done = run_referee("match", "--bot", f"llm:{model}", *["--bot", "greedy"] * 3)
    assert done.returncode == 2, done.stderr
    assert problem.split(" ")[0].rstrip(":") in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_key_file_open_to_other_users_is_refused(tmp_path):
    key = tmp_path / "k"
    key.write_text("sk-123\n")
    key.chmod(0o644)
    model = write_settings(tmp_path, "http://127.0.0.1:9/v1", 'api_key_file = "k"\n')
    with pytest.raises(ConfigError, match="readable by other users"):
        load_model_settings(model).with_key()
    key.chmod(0o600)
    assert load_model_settings(model).with_key().endpoint.api_key == "sk-123"


def test_a_tournament_and_a_ladder_name_a_model_seat_like_a_builtin_bot(tmp_path):
    write_settings(tmp_path, "http://127.0.0.1:9/v1")
    tournament = {
        "bot": [
            {"name": "gemma", "builtin": "llm:model.toml"},
            *({"name": n, "builtin": n} for n in ("greedy", "random")),
            {"name": "g2", "builtin": "greedy"},
        ]
    }
    config = parse_config(tournament, tmp_path / "t.toml")
    assert config.bots[0].builtin == f"llm:{tmp_path / 'model.toml'}"
    with pytest.raises(ConfigError, match=r"bot 'x'\.builtin"):
        parse_config({"bot": [{"name": "x", "builtin": "llm:missing.toml"}]}, tmp_path / "t.toml")
    ladder = parse_ladder_config(
        {"ladder": {"anchors": ["greedy", "llm:model.toml"]}}, tmp_path / "l.toml"
    )
    assert house_bot_name(ladder.anchors[1]) == "llm-remote-gemma"


async def test_a_tournament_releases_a_models_traces_when_its_deal_group_is_over(tmp_path):
    async with ScriptedEndpoint([passing]) as ep:
        write_settings(tmp_path, ep.url, "backoff_s = 0.01\n")
        config = tmp_path / "t.toml"
        config.write_text(
            '[tournament]\nseed = "llm-t"\noutput = "out"\nrounds = 1\n'
            '[rules]\nprofile = "pusoy-dos"\nhands = 1\n'
            '[time]\nturn_time_ms = 2000\n'
            '[[bot]]\nname = "gemma"\nbuiltin = "llm:model.toml"\n'
            + "".join(f'[[bot]]\nname = "{n}"\nbuiltin = "{b}"\n' for n, b in
                      (("g1", "greedy"), ("g2", "greedy"), ("r", "random")))
        )  # fmt: skip
        done = await asyncio.to_thread(run_referee, "tournament", str(config), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    logs = sorted((out / "logs").glob("*.jsonl"))
    traces = sorted((out / "logs").glob("*.trace.ndjson"))
    assert len(logs) == 4 and len(traces) == 4  # one group, its rotations: all released
    assert not (out / "logs" / ".traces-pending").exists()
    for trace in traces:
        assert oct(trace.stat().st_mode & 0o777) == "0o600"
    check = await asyncio.to_thread(run_referee, "verify", str(logs[0]))
    assert check.returncode == 0 and "each bound to its action" in check.stdout, check.stdout
    # The whole folder's verification checks every released trace against its log too.
    whole = await asyncio.to_thread(run_referee, "verify", "--tournament", str(out))
    assert whole.returncode == 0 and "4 model traces bound to them" in whole.stdout, whole.stdout
    lines = traces[2].read_text().splitlines()
    traces[2].write_text("\n".join(lines[:-1]) + "\n")  # its last line dropped
    whole = await asyncio.to_thread(run_referee, "verify", "--tournament", str(out))
    assert whole.returncode == 1, whole.stdout
    assert f"{traces[2].name.split('.')[0]}.jsonl: trace of seat " in whole.stdout, whole.stdout


async def test_a_ray_worker_brings_back_a_models_trace_whole(tmp_path):
    """What a Ray task runs (``play_here``) and what the driver does with its result
    (``place_files``), without the cluster: the trace comes back whole, waits in private,
    and verifies against the re-signed log once released."""
    from referee.backends import MatchJob
    from referee.backends.ray import place_files, play_here
    from referee.llm.trace import release_all
    from referee.log.traces import verify_traces
    from referee.match.settings import MatchSettings, match_rules
    from referee.table.bots import BuiltinBot, Seat

    async with ScriptedEndpoint([passing]) as ep:
        model = write_settings(tmp_path, ep.url)
        greedy = [Seat(f"g{i}", BuiltinBot("greedy")) for i in (1, 2, 3)]
        seats = (Seat("gemma", BuiltinBot(f"llm:{model}")), *greedy)
        settings = MatchSettings(match_rules("pusoy-dos", hands=1), seed="ray-llm")
        job = MatchJob("m1", settings, seats, tmp_path / "out" / "m1.jsonl", tmp_path / "out")
        played = await asyncio.to_thread(play_here, job)
    assert played.traces and played.traces[0][0] == 0
    report = place_files(played, job)
    [(_, pending)] = report.traces
    assert pending.parent.name == ".traces-pending" and pending.exists()
    assert not verify_traces(job.log_path)[0].path  # bound, not released yet
    release_all(job.log_path)
    [check] = verify_traces(job.log_path)
    assert check.problem is None and check.lines > 0
