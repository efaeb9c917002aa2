"""What a sandboxed bot may see, who plays for a disqualified bot, and the decisions made
before a tournament starts; no sandbox is started here (test_sandbox.py starts them)."""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from pathlib import Path

import pytest

from referee.sandbox import JailSpec, Level, SandboxLimits, Support
from referee.sandbox.bwrap import mount_args
from referee.sandbox.cgroups import Cgroups
from referee.tournament import isolation
from referee.tournament.config import BotConfig, BotKind, DisqualifyConfig, Replacement
from referee.tournament.director import Tournament, TournamentError
from referee.tournament.disqualify import Disqualifier
from referee.tournament.isolation import Isolation, SandboxUnavailable
from referee.tournament.results import MatchResult, SeatResult, SeatSummary
from referee.tournament.toml_reader import load_config

from .conftest import bot_entry, write_config


def command_bot(folder: Path, name: str, script: str = "bot.py") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / script).write_text("print('hi')\n")
    return bot_entry(name, command=f"{{python}} {script} --seat={{seat}}", cwd=str(folder))


def test_a_bot_sees_its_files_not_the_others_nor_the_tournament(tmp_path):
    shared = tmp_path / "shared"
    bots = [
        command_bot(tmp_path / "alice", "alice"),
        command_bot(tmp_path / "bob", "bob"),
        command_bot(shared, "carol", "carol.py"),
        command_bot(shared, "dave", "dave.py"),
    ]
    config = load_config(write_config(tmp_path, bots))
    iso = Isolation(config, config.output, 1)
    view = iso._view("alice")
    visible, hidden = view.visible, view.hidden
    assert (tmp_path / "alice") in visible
    assert config.output.resolve() in hidden and config.source.resolve() in hidden
    assert {tmp_path / "bob", shared} <= set(hidden)
    # Two bots in one folder: the folder stays, the other's program is hidden.
    view = iso._view("carol")
    visible, hidden = view.visible, view.hidden
    assert shared in visible and shared not in hidden
    assert shared / "dave.py" in hidden and shared / "carol.py" not in hidden


def test_the_mounts_hide_inside_what_is_visible_and_make_readable_parents(tmp_path):
    mine = tmp_path / "bots" / "mine"
    other = mine / "other"
    other.mkdir(parents=True)
    (mine / "secret.toml").write_text("key = 'x'\n")
    spec = JailSpec(
        argv=["true"],
        cwd=mine,
        env={"A": "1"},
        visible=[mine, Path("/"), Path("/tmp")],
        hidden=[other, mine / "secret.toml", Path("/nonexistent/x"), tmp_path / "elsewhere"],
        referee_socket=tmp_path / "ref.sock",
        limits=SandboxLimits(tmp_mb=8),
    )
    args = mount_args(spec)
    text = " ".join(args)
    assert f"--ro-bind {mine} {mine}" in text
    assert "--ro-bind / /" not in text and "--ro-bind /tmp /tmp" not in text
    assert f"--perms 0755 --dir {tmp_path}" in text  # readable parents for the bot's user
    assert f"--tmpfs {other} --remount-ro {other}" in text
    assert f"--ro-bind /dev/null {mine / 'secret.toml'}" in text
    assert "elsewhere" not in text and "/nonexistent" not in text
    assert f"--size {8 << 20} --tmpfs /tmp" in text
    assert args.index(f"{mine}") < args.index(f"{other}")  # masks come after the binds
    assert args[args.index("--chdir") + 1] == str(mine)
    assert args[args.index("--chdir") - 2 :] == ["--remount-ro", "/", "--chdir", str(mine)]
    assert "--setenv A 1" in text and "--unshare-net" in args and "--clearenv" in args

    # A file the bot's command names stays visible inside a hidden folder (a script kept
    # in the log folder): bound into the hidden folder's empty stand-in before it is
    # made read-only.
    (other / "sub").mkdir()
    (other / "sub" / "own.py").write_text("print('mine')\n")
    text = " ".join(mount_args(dataclasses.replace(spec, revealed=[other / "sub" / "own.py"])))
    assert (
        f"--tmpfs {other} --perms 0755 --dir {other / 'sub'} "
        f"--ro-bind {other / 'sub' / 'own.py'} {other / 'sub' / 'own.py'} --remount-ro {other}"
    ) in text


def seat(bot: str, s: int, **fields) -> SeatResult:
    counts = {k: fields.pop(k) for k in ("timeouts", "absent_turns") if k in fields}
    return SeatResult(bot, SeatSummary(seat=s, **counts), **fields)


def result(index: int, *seats: SeatResult, status: str = "finished") -> MatchResult:
    return MatchResult(
        match_id=f"m{index}", index=index, group=index, round=0, table=0, seating=0, seed="s",
        status=status, error="", referee_match_id="r", log="", hands=1, verified=None,
        started="", duration_s=0.0, seats=seats,
    )  # fmt: skip


def four(index: int, **faults) -> MatchResult:
    return result(index, seat("x", 0, **faults), *(seat(n, i) for i, n in enumerate("abc", 1)))


def test_fault_rate_disqualifies_after_enough_matches_and_forfeit_leaves_the_seat_empty():
    dq = Disqualifier(
        DisqualifyConfig(
            fault_rate=0.5, faulty_turns=2, min_matches=3, replacement=Replacement.FORFEIT
        )
    )
    assert dq.judge(four(0, timeouts=5)).seats[0].disqualified == ""  # 1 of 1, too few
    assert dq.judge(four(1)).seats[0].disqualified == ""  # 1 of 2
    judged = dq.judge(four(2, absent_turns=2))  # 2 of 3: over half
    assert judged.seats[0].disqualified == "2 faulty matches of 3"
    assert dq.out == {"x": "2 faulty matches of 3"}
    x = BotConfig("x", BotKind.COMMAND, argv=("bot",))
    assert dq.stand_in(x) is None and dq.replacement_name("x") == "forfeit"
    assert dq.stand_in(BotConfig("a", BotKind.BUILTIN, builtin="greedy")).name == "a"


def test_breaches_disqualify_and_replaced_seats_or_failed_matches_do_not_count():
    dq = Disqualifier(DisqualifyConfig(breaches=2))
    dq.judge(four(0, breach="memory limit"))
    dq.judge(result(1, seat("x", 0, breach="CPU limit"), status="failed"))
    assert not dq.out
    judged = dq.judge(four(2, breach="CPU limit"))
    assert judged.seats[0].disqualified == "2 limit breaches (last: CPU limit)"
    replaced = dq.stand_in(BotConfig("x", BotKind.COMMAND, argv=("bot",)))
    assert replaced is not None and replaced.builtin == "random"
    again = Disqualifier(DisqualifyConfig(breaches=2))
    again.replay([four(0, breach="memory limit"), four(2, breach="CPU limit")])
    assert again.out == dq.out  # resuming decides the same


def fake_support(problems: tuple[str, ...] = (), light: tuple[str, ...] = ()) -> Support:
    """What probe() says: the full jail, or the light one (``problems`` of the full), or
    none (``light`` problems too)."""
    if not problems:
        return Support(Level.FULL, {}, "bwrap", "bubblewrap 0.8.0", Cgroups({}))
    level = Level.NONE if light else Level.LIGHT
    missing = {Level.FULL: problems, **({Level.LIGHT: light} if light else {})}
    return Support(level, missing, "bwrap", "bubblewrap 0.8.0")


def test_a_required_sandbox_that_cannot_work_stops_the_tournament(tmp_path, monkeypatch):
    light_only = fake_support(("it needs root",))
    monkeypatch.setattr(isolation, "probe", lambda: light_only)
    bots = [command_bot(tmp_path / "p", "p")] + [bot_entry(n, builtin="greedy") for n in "abc"]
    path = write_config(tmp_path, bots, tournament={"format": "fixed"})
    base = path.read_text()
    path.write_text(base + "\n[sandbox]\nenabled = true\n")  # the full jail, or nothing
    with pytest.raises(TournamentError, match="full sandbox cannot work on this machine: it"):
        Tournament(load_config(path)).prepare()
    assert not (tmp_path / "out").exists()  # said before anything was written

    path.write_text(base)  # auto: the light jail, and it says why not the full one
    tournament = Tournament(load_config(path), output=tmp_path / "auto")
    tournament.prepare()
    assert tournament.isolation.active and tournament.isolation.level is Level.LIGHT
    # Said once, in the plan, not as a warning: nothing to do about it for most users.
    (head,) = tournament.isolation.describe()
    assert "light jail" in head and "no full jail: it needs root" in head
    assert not any("light jail" in w for w in tournament.warnings)


def test_where_no_jail_can_be_made_a_tournament_with_spawned_bots_refuses(tmp_path, monkeypatch):
    none = fake_support(("it needs root",), ("bubblewrap cannot make namespaces here",))
    monkeypatch.setattr(isolation, "probe", lambda: none)
    bots = [command_bot(tmp_path / "p", "p")] + [bot_entry(n, builtin="greedy") for n in "abc"]
    path = write_config(tmp_path, bots, tournament={"format": "fixed"})
    with pytest.raises(TournamentError, match="every bot could read every hand") as caught:
        Tournament(load_config(path)).prepare()
    assert "light jail: bubblewrap cannot make namespaces here" in str(caught.value)
    assert "enabled = false" in str(caught.value)
    assert not (tmp_path / "out").exists()

    path.write_text(path.read_text() + "\n[sandbox]\nenabled = false\n")  # knowingly
    old = os.umask(0o022)
    try:
        tournament = Tournament(load_config(path), output=tmp_path / "bare")
        tournament.prepare()
    finally:
        os.umask(old)
    assert not tournament.isolation.active
    assert any("sandbox is off" in w for w in tournament.warnings)
    # The tournament's folder and files are private whatever the umask.
    assert (tmp_path / "bare").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "bare" / "tournament.json").stat().st_mode & 0o777 == 0o600

    builtin = write_config(
        tmp_path, [bot_entry(n, builtin="greedy") for n in "abcd"], name="b.toml"
    )
    Tournament(load_config(builtin), output=tmp_path / "builtin").prepare()  # nothing spawned


def test_own_cores_only_when_there_are_enough(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "probe", lambda: fake_support())
    bots = [command_bot(tmp_path / "p", "p")] + [bot_entry(n, builtin="greedy") for n in "abc"]
    path = write_config(tmp_path, bots, tournament={"format": "fixed"})
    config = load_config(path)
    monkeypatch.setattr(isolation.CoreAllocator, "available", staticmethod(lambda: [0, 1, 2, 3, 4]))
    auto = Isolation(config, tmp_path / "o", concurrency=2)
    auto.check()
    assert auto.active and auto.jailer is not None
    assert auto.jailer.cores is None  # 9 needed for 2 matches: shared cores
    path.write_text(path.read_text() + "\n[sandbox]\nown_cores = true\n")
    with pytest.raises(SandboxUnavailable, match="needs 9 cores"):
        Isolation(load_config(path), tmp_path / "o", concurrency=2).check()


def test_remote_deals_unseen_never_deals_a_remote_bot_a_deal_twice():
    """The schedule's remote_deals = "unseen" (the plan itself; no match is played)."""
    from referee.tournament.config import Seatings
    from referee.tournament.schedule import group_seed, own_seed, plan

    tables = [("r", "a", "b", "c"), ("r", "a", "b", "d"), ("a", "b", "c", "d")]
    specs = plan(tables, 2, Seatings.ROTATIONS, "m", "0" * 64, remote={"r"}, unseen=True)
    dealt = defaultdict(list)
    for s in specs:
        if "r" in s.bots:
            dealt["r"].append(s.seed)
    assert len(dealt["r"]) == 16 and len(set(dealt["r"])) == 16
    shared = [s for s in specs if "r" not in s.bots]
    for group in {s.group for s in shared}:
        assert len({s.seed for s in shared if s.group == group}) == 1
    # Seating 0 of a remote table keeps its group's deal; the others borrow other tables'.
    table0 = [s.seed for s in specs if s.round == 0 and s.table == 0]
    assert table0[:3] == [group_seed("m", 0), group_seed("m", 1), group_seed("m", 2)]
    assert table0[3] == own_seed("m", 0, 3)  # every deal of the round seen: its own
    plain = plan(tables, 2, Seatings.ROTATIONS, "m", "0" * 64, remote={"r"})
    assert len({s.seed for s in plain if "r" in s.bots}) == 4  # shared: 4 deals, 4 times each


@pytest.mark.parametrize(
    ("tournament", "says"),
    [
        ({}, "see each deal of their groups 4 times"),
        ({"remote_deals": "unseen"}, "dealt only deals they have not seen"),
        ({"seatings": "none"}, None),
    ],
)
def test_a_duplicate_tournament_with_a_remote_bot_warns_before_it_starts(
    tmp_path, tournament, says
):
    bots = [bot_entry("far", key="k" * 12)] + [bot_entry(n, builtin="greedy") for n in "abc"]
    path = write_config(tmp_path, bots, tournament={"format": "fixed", **tournament})
    warnings = Tournament(load_config(path)).preflight()
    remote = [w for w in warnings if "remote bots (far)" in w]
    if says is None:
        assert remote == []
    else:
        assert len(remote) == 1 and says in remote[0] and "not sandboxed" in remote[0]


def test_a_machine_that_cannot_sandbox_says_what_is_missing():
    """The typed error a test skips with, and a required sandbox stops with."""
    broken = fake_support(
        ("it needs root",), ("missing programs: install the Debian packages bubblewrap",)
    )
    with pytest.raises(SandboxUnavailable) as caught:
        broken.require()
    assert str(caught.value) == (
        "this machine cannot make any jail for bots: full jail: it needs root; light jail: "
        "missing programs: install the Debian packages bubblewrap"
    )
    assert fake_support(("it needs root",)).require() is Level.LIGHT
    with pytest.raises(SandboxUnavailable, match="cannot make a full jail"):
        fake_support(("it needs root",)).require(Level.FULL)
