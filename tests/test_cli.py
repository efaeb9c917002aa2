"""The ``referee`` command line, run as a user would."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from referee_process import Serve

ROOT = Path(__file__).resolve().parents[1]


def referee(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["rules", "judge"],
        ["rules", "moves"],
        ["rules", "positions"],
        ["serve"],
        ["match"],
        ["replay"],
        ["verify"],
        ["view"],
        ["tournament"],
        ["organiser"],
        ["bot"],
        ["stdio-bot"],
        ["dataset"],
        ["ladder"],
        *(
            ["ladder", c]
            for c in ("init", "team", "submit", "run", "serve", "status", "retire", "backup")
        ),
    ],
)
def test_every_command_has_help_with_an_example(command):
    done = referee(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: referee" in done.stdout
    if command:
        assert "example" in done.stdout


def test_match_help_says_what_each_placeholder_becomes():
    from referee.table.bots import PLACEHOLDERS

    text = referee("match", "--help").stdout
    for name, meaning in PLACEHOLDERS.items():
        assert re.search(rf"^  \{{{name}\}} +{re.escape(meaning)}$", text, re.M), name
    assert '--bot "{python} mybot.py"' in text


def test_match_then_replay_then_verify(tmp_path):
    done = referee(
        "match",
        "--profile",
        "big-two",
        "--hands",
        "2",
        "--seed",
        "cli",
        "--log-dir",
        str(tmp_path),
        "--bot",
        "greedy",
        "--bot",
        "random",
        "--bot",
        f"{sys.executable} examples/random_bot.py",
        "--bot",
        "greedy",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "finished after 2 hands" in done.stdout
    # One standings row per seat, best place first; tied seats share a place.
    places = re.findall(r"^ +(\d) +(\d) +\S+ +-?\d+ ", done.stdout, flags=re.M)
    assert sorted(seat for _, seat in places) == ["0", "1", "2", "3"]
    assert places[0][0] == "1"
    log = next(
        line.split("Log: ")[1] for line in done.stdout.splitlines() if line.startswith("Log: ")
    )
    assert Path(log).is_file()
    replay = referee("replay", log)
    assert (
        replay.returncode == 0 and "Hand 2" in replay.stdout and "Match finished" in replay.stdout
    )
    verify = referee("verify", log)
    assert verify.returncode == 0 and verify.stdout.startswith("OK: ")


def test_match_with_house_rules_given_as_flags(tmp_path):
    done = referee(
        "match",
        "--profile",
        "pusoy-dos",
        "--hands",
        "1",
        "--seed",
        "flags",
        "--log-dir",
        str(tmp_path),
        "--revolution",
        "true",
        "--option",
        "bomb=true",
    )
    assert done.returncode == 0, done.stderr
    log = next(tmp_path.glob("*.jsonl"))
    assert '"revolution":true' in log.read_text().splitlines()[0]
    assert '"bomb":true' in log.read_text().splitlines()[0]


def test_bad_input_gets_a_clear_error_and_a_failing_exit(tmp_path):
    bad_profile = referee("match", "--profile", "poker", "--log-dir", str(tmp_path))
    assert bad_profile.returncode == 2 and "unknown profile 'poker'" in bad_profile.stderr
    bad_option = referee("match", "--option", "revolution", "--log-dir", str(tmp_path))
    assert bad_option.returncode != 0 and "NAME=VALUE" in bad_option.stderr
    three_bots = referee("match", "--bot", "random", "--bot", "random", "--bot", "random")
    assert three_bots.returncode == 2 and "4 bots" in three_bots.stderr
    no_program = referee(
        "match",
        "--bot",
        "./no-such-bot",
        "--bot",
        "random",
        "--bot",
        "random",
        "--bot",
        "random",
        "--log-dir",
        str(tmp_path),
    )
    assert no_program.returncode == 2 and "cannot start bot './no-such-bot'" in no_program.stderr
    missing = referee("verify", str(tmp_path / "missing.jsonl"))
    assert missing.returncode == 1 and "cannot read" in missing.stdout
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    assert referee("replay", str(garbage)).returncode == 1
    verify = referee("verify", str(garbage))
    assert verify.returncode == 1 and "line 1" in verify.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hands", "-3"], "argument --hands: must be from 0 to"),
        (["--turn-time-ms", "soon"], "argument --turn-time-ms: not a whole number: 'soon'"),
        (["--hands", "2", "--threshold", "50"], "--threshold: not allowed with argument --hands"),
        (["--profile", "poker"], "unknown profile 'poker'"),
        (["--turn-time-ms", "3600001"], "time_control.turn_time_ms is over one hour"),
        (["--max-rejections", "1001"], "fault_policy.max_rejections_per_turn is over 1000"),
        (["--hands", "20000"], "at most 10000 hands per match"),
        (["--bot", "greedy"], "give 4 bots"),
        (
            ["--bot", "./mybot --token={tokn}", *["--bot", "greedy"] * 3],
            "'./mybot --token={tokn}': unknown placeholder {tokn} (known: {address}, {token}",
        ),
        (["--option", "foo"], "--option wants NAME=VALUE, got 'foo'"),
    ],
)
def test_match_refuses_bad_arguments_with_a_clear_message(tmp_path, args, message):
    done = referee("match", "--log-dir", str(tmp_path), *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.jsonl"))


def test_the_stdio_bridge_names_a_tls_file_it_cannot_read_before_starting_the_bot(tmp_path):
    started = tmp_path / "started"
    done = referee(
        "stdio-bot", "--token", "t", "--tls-ca", str(tmp_path / "no-ca.pem"),
        "--", "touch", str(started),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"referee stdio-bot: cannot read the CA certificate {tmp_path / 'no-ca.pem'}: "
        "No such file or directory"
    ]
    assert not started.exists()


def test_match_and_serve_report_a_log_folder_they_cannot_use(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    for command in (["match", "--hands", "1"], ["serve", "--address", "127.0.0.1:0"]):
        done = referee(*command, "--log-dir", str(not_a_folder / "logs"))
        assert done.returncode == 2, done.stderr
        assert f"cannot use {not_a_folder / 'logs'} for match logs" in done.stderr
        assert "Traceback" not in done.stderr


def test_serve_reports_an_address_it_cannot_listen_on():
    done = referee("serve", "--address", "127.0.0.1:notaport")
    assert done.returncode == 2
    assert "referee serve: cannot listen on 127.0.0.1:notaport" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_refuses_a_port_another_referee_listens_on(tmp_path):
    """gRPC binds with SO_REUSEPORT unless told not to: a second referee on the same port
    would have taken half of the first one's connections."""
    first = Serve(tmp_path / "first")
    first.start()
    try:
        done = referee(
            "serve",
            *("--address", first.address, "--state-dir", str(tmp_path / "s2")),
            *("--log-dir", str(tmp_path / "l2")),
            timeout=60,  # it would serve (until killed) beside the first
        )
    finally:
        first.stop()
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"referee serve: cannot listen on {first.address}" in done.stderr
    assert "Traceback" not in done.stderr


def test_verify_and_replay_name_a_log_they_cannot_read(tmp_path):
    missing = tmp_path / "missing.jsonl"
    verify = referee("verify", str(missing))
    assert verify.returncode == 1
    assert verify.stdout.startswith(f"FAILED: {missing}: cannot read the log:")
    replay = referee("replay", str(missing))
    assert replay.returncode != 0 and "Traceback" not in replay.stderr
    assert str(missing) in replay.stderr
