"""Configuration errors are reported before anything starts, naming the key at fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.sandbox import SandboxLimits
from referee.tournament.config import (
    ConfigError,
    Format,
    RemoteDeals,
    Replacement,
    SandboxMode,
    Seatings,
)
from referee.tournament.toml_reader import load_config

from .conftest import bot_entry, example_bot, write_config

FOUR = [
    bot_entry(n, builtin=b)
    for n, b in [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random")]
]


def error_of(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value


def test_a_full_config_parses(tmp_path):
    bots = [
        *FOUR,
        bot_entry("weak", **example_bot("weak_bot.py", X="1")),
        bot_entry("far", key="k" * 12, max_matches=2),
    ]
    cfg = load_config(
        write_config(
            tmp_path,
            bots,
            tournament={"rounds": 3, "seatings": "permutations", "concurrency": 3},
            rules={"profile": "big-two", "options": {"revolution": True}},
        )
    )
    assert cfg.format is Format.ROUND_ROBIN and cfg.seatings is Seatings.PERMUTATIONS
    assert len(cfg.tables()) == 15  # C(6, 4)
    assert cfg.total_matches == 15 * 3 * 24
    assert cfg.rules.revolution and cfg.rules.profile == "big-two"
    assert cfg.output == tmp_path / "out"
    weak = cfg.bot("weak")
    assert weak.argv[0] == "{python}" and dict(weak.env) == {"X": "1"} and weak.cwd == tmp_path
    assert [b.name for b in cfg.remote_bots] == ["far"]


def test_the_time_and_faults_tables_are_every_match_s_settings(tmp_path):
    default = tmp_path / "default.toml"
    default.write_text("\n".join(FOUR) + "\n")
    settings = load_config(default).match_settings("s", ["a", "b", "c", "d"])
    assert (settings.turn_time_ms, settings.connect_timeout_ms) == (2000, 10_000)
    assert (settings.max_rejections_per_turn, settings.max_actions_out_of_turn) == (3, 16)
    cfg = load_config(
        write_config(
            tmp_path,
            FOUR,
            time={"turn_time_ms": 700, "time_bank_ms": 50, "match_timeout_s": 60},
            more={"faults": {"max_strikes": 2, "max_actions_out_of_turn": 4}},
        )
    )
    settings = cfg.match_settings("seed-1", ["d", "c", "b", "a"])
    assert settings.seed == "seed-1" and settings.seat_names == ("d", "c", "b", "a")
    assert (settings.turn_time_ms, settings.time_bank_ms, settings.max_strikes) == (700, 50, 2)
    assert settings.max_actions_out_of_turn == 4 and cfg.match_timeout_s == 60
    assert cfg.identity()["time"] == {
        "turn_time_ms": 700,
        "connect_timeout_ms": 5000,
        "time_bank_ms": 50,
        "match_timeout_s": 60,
    }
    assert cfg.identity()["faults"] == {
        "max_rejections_per_turn": 3,
        "max_strikes": 2,
        "max_actions_out_of_turn": 4,
    }


def test_rules_no_match_may_be_played_with_are_refused(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('[rules]\noptions = { match_end = "hands 20000" }\n' + "\n".join(FOUR))
    err = error_of(path)
    assert err.where == "rules" and "at most 10000 hands per match" in str(err)


def test_matches_rounds_up_to_whole_rounds(tmp_path):
    bots = [*FOUR, bot_entry("e", builtin="greedy")]
    cfg = load_config(write_config(tmp_path, bots, tournament={"matches": 21}))
    assert cfg.matches_per_round == 20 and cfg.rounds == 2 and cfg.total_matches == 40


def test_gauntlet_and_fixed_tables(tmp_path):
    bots = [*FOUR, bot_entry("e", builtin="greedy")]
    g = load_config(write_config(tmp_path, bots, tournament={"format": "gauntlet", "hero": "e"}))
    assert g.tables() == [
        ("e", "a", "b", "c"),
        ("e", "a", "b", "d"),
        ("e", "a", "c", "d"),
        ("e", "b", "c", "d"),
    ]
    f = load_config(
        write_config(tmp_path, bots, tournament={"format": "fixed", "table": ["e", "d", "c", "b"]})
    )
    assert f.tables() == [("e", "d", "c", "b")]


@pytest.mark.parametrize(
    ("bots", "sections", "where", "words"),
    [
        (FOUR[:3], {}, "bot", "needs four bots"),
        (FOUR, {"rules": {"profile": "poker"}}, "rules.profile", "unknown profile"),
        (
            FOUR,
            {"rules": {"options": {"revolution": "maybe"}}},
            "rules.options",
            "not true or false",
        ),
        (FOUR, {"rules": {"hands": 2, "threshold": 30}}, "rules", "either hands or threshold"),
        (FOUR, {"rules": {"options": {"teams": True}}}, "rules.options.teams", "not supported"),
        (FOUR, {"tournament": {"format": "swiss"}}, "tournament.format", "not one of"),
        (FOUR, {"tournament": {"format": "gauntlet"}}, "tournament.hero", "needs the name"),
        (FOUR, {"tournament": {"format": "gauntlet", "hero": "zz"}}, "tournament.hero", "no bot"),
        (
            FOUR,
            {"tournament": {"format": "fixed", "table": ["a", "b", "c", "c"]}},
            "tournament.table",
            "four different",
        ),
        (FOUR, {"tournament": {"rounds": 0}}, "tournament.rounds", "at least 1"),
        (FOUR, {"tournament": {"rounds": 1, "matches": 4}}, "tournament.matches", "not both"),
        (FOUR, {"tournament": {"concurrency": "two"}}, "tournament.concurrency", "whole number"),
        (FOUR, {"tournament": {"colour": "red"}}, "tournament.colour", "unknown key"),
        (FOUR, {"time": {"turn_time_ms": 0}}, "time.turn_time_ms", "between 1"),
        (
            FOUR,
            {"more": {"faults": {"max_rejections_per_turn": 1001}}},
            "faults.max_rejections_per_turn",
            "between 1 and 1000, got 1001",
        ),
        (
            FOUR,
            {"more": {"faults": {"max_strikes": -1}}},
            "faults.max_strikes",
            "between 0 and 1000000",
        ),
        (FOUR, {"time": {"reconnect_grace_ms": 5}}, "time.reconnect_grace_ms", "unknown key"),
        (FOUR, {"referee": {"address": "nowhere"}}, "referee.address", "host:port"),
    ],
)
def test_config_errors_name_the_key(tmp_path, bots, sections, where, words):
    err = error_of(write_config(tmp_path, bots, **sections))
    assert err.where == where, str(err)
    assert words in str(err)


@pytest.mark.parametrize(
    ("entry", "where", "words"),
    [
        (
            bot_entry("x", command="{python} no_such_bot.py"),
            "bot 'x'.command",
            "script 'no_such_bot.py' not found",
        ),
        (
            bot_entry("x", command="no-such-program-here --fast"),
            "bot 'x'.command",
            "not found on PATH",
        ),
        (bot_entry("x", command="./missing"), "bot 'x'.command", "not found"),
        (
            bot_entry("x", command="{python} -c pass {tokn}"),
            "bot 'x'.command",
            "unknown placeholder {tokn}",
        ),
        (bot_entry("x", command=""), "bot 'x'.command", "is empty"),
        (bot_entry("x", builtin="clever"), "bot 'x'.builtin", "not one of"),
        (bot_entry("x", builtin="greedy", command="bot"), "bot 'x'", "exactly one of"),
        (bot_entry("x", key="short"), "bot 'x'.key", "at least 8"),
        (bot_entry("a", builtin="greedy"), "bot[5].name", "two bots are named"),
        (bot_entry("bad name!", builtin="greedy"), "bot[5].name", "not a bot name"),
        (bot_entry("x", builtin="greedy", speed=3), "bot 'x'.speed", "unknown key"),
    ],
)
def test_bot_errors(tmp_path, entry, where, words):
    err = error_of(write_config(tmp_path, [*FOUR, entry]))
    assert err.where == where, str(err)
    assert words in str(err)


def test_unreadable_and_invalid_files(tmp_path):
    assert "cannot read" in str(error_of(tmp_path / "nope.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[tournament\n")
    assert "not valid TOML" in str(error_of(bad))


def test_identity_leaves_out_what_may_change_between_runs(tmp_path):
    a = load_config(write_config(tmp_path, FOUR, tournament={"concurrency": 1}, name="a.toml"))
    b = load_config(
        write_config(
            tmp_path,
            FOUR,
            tournament={"concurrency": 4, "output": "elsewhere", "name": "other"},
            referee={"address": "0.0.0.0:0", "verify_logs": False, "lobby_wait_s": 5},
            name="b.toml",
        )
    )
    assert a.identity_hash() == b.identity_hash()
    c = load_config(write_config(tmp_path, FOUR, rules={"hands": 3}, name="c.toml"))
    assert c.identity_hash() != a.identity_hash()


def test_sandbox_limits_and_disqualification_parse(tmp_path):
    (tmp_path / "data").mkdir()
    bots = [
        *FOUR[:3],
        bot_entry(
            "mine",
            **example_bot("weak_bot.py"),
            limits={"memory_mb": 2048, "cpu_s": 30},
            read_only=["data"],
        ),
    ]
    cfg = load_config(
        write_config(
            tmp_path,
            bots,
            tournament={"remote_deals": "unseen"},
            more={
                "sandbox": {"enabled": True, "processes": 64, "tmp_mb": 16, "cpu_cores": 0.5},
                "disqualify": {"crashes": 2, "fault_rate": 0.25, "replacement": "forfeit"},
            },
        )
    )
    assert cfg.sandbox.mode is SandboxMode.ON and cfg.sandbox.cpu_cores == 0.5
    mine = cfg.limits_for(cfg.bot("mine"))
    assert (mine.memory_mb, mine.cpu_s, mine.processes, mine.tmp_mb) == (2048, 30, 64, 16)
    assert cfg.limits_for(cfg.bot("a")).memory_mb == SandboxLimits().memory_mb
    assert cfg.bot("mine").read_only == ((tmp_path / "data").resolve(),)
    assert cfg.disqualify.active and cfg.disqualify.replacement is Replacement.FORFEIT
    assert cfg.remote_deals is RemoteDeals.UNSEEN
    identity = cfg.identity()
    assert identity["sandbox"]["limits"]["processes"] == 64
    assert identity["disqualify"]["crashes"] == 2 and identity["remote_deals"] == "unseen"
    assert identity["bots"][3]["limits"] == {"cpu_s": 30.0, "memory_mb": 2048}


def test_defaults_leave_the_identity_as_it_was(tmp_path):
    """A tournament started before sandboxes existed keeps its hash, so it resumes."""
    cfg = load_config(
        write_config(tmp_path, [*FOUR[:3], bot_entry("w", **example_bot("weak_bot.py"))])
    )
    identity = cfg.identity()
    assert not {"sandbox", "disqualify", "remote_deals"} & set(identity)
    assert set(identity["bots"][3]) == {"name", "kind", "argv", "env", "cwd"}
    off = load_config(
        write_config(
            tmp_path,
            [*FOUR[:3], bot_entry("w", **example_bot("weak_bot.py"))],
            more={"sandbox": {"enabled": False}},
            name="off.toml",
        )
    )
    assert off.identity_hash() == cfg.identity_hash()  # on or off is the machine's business


@pytest.mark.parametrize(
    ("more", "bot_fields", "where", "says"),
    [
        ({"sandbox": {"enabled": "yes"}}, {}, "sandbox.enabled", 'true, false or "auto"'),
        ({"sandbox": {"memory_mb": 1}}, {}, "sandbox.memory_mb", "between 16"),
        ({"sandbox": {"swap": 1}}, {}, "sandbox.swap", "unknown key"),
        ({"sandbox": {"read_only": ["nope"]}}, {}, "sandbox.read_only", "does not exist"),
        ({}, {"limits": {"memory": 5}}, "bot 'p'.limits.memory", "unknown key"),
        ({}, {"limits": {"processes": 0}}, "bot 'p'.limits.processes", "between 1"),
        ({"disqualify": {"replacement": "nobody"}}, {}, "disqualify.replacement", "forfeit"),
        ({"disqualify": {"fault_rate": 1.5}}, {}, "disqualify.fault_rate", "below 1"),
    ],
)
def test_sandbox_and_disqualify_errors(tmp_path, more, bot_fields, where, says):
    bots = [*FOUR[:3], bot_entry("p", **example_bot("weak_bot.py"), **bot_fields)]
    err = error_of(write_config(tmp_path, bots, more=more))
    assert err.where == where and says in err.message, str(err)


def test_only_spawned_bots_have_limits(tmp_path):
    bots = [*FOUR[:3], bot_entry("g", builtin="greedy", limits={"memory_mb": 64})]
    err = error_of(write_config(tmp_path, bots))
    assert err.where == "bot 'g'.limits" and "spawned" in err.message
