"""The three ways a jail holds its bot's tree, each with real processes: cgroup v1
counters and SIGSTOP to its groups' processes (the full jail), a cgroup v2 group (freeze,
kill, cpu.stat: this machine's unified hierarchy, as root), and the jail's PID namespace
alone (SIGSTOP, the referee's own counts). Then the cgroup v2 limits a delegating host
gives, on a folder tree standing in for its files (no machine here delegates them)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from pathlib import Path

import jailing
import pytest

from referee.sandbox import Level, SandboxLimits, Support, probe, probe_light
from referee.sandbox.cgroup2 import Cgroups2, own_cgroup2
from referee.sandbox.jail import Jail
from referee.sandbox.jailer import Jailer, enforcement
from referee.sandbox.limits import HELPER_TASKS, Breach
from referee.sandbox.view import folder_view
from referee.table.procs import BotProcess

LOOPS = "for i in 1 2 3; do setsid sh -c 'while :; do :; done' & done; wait"


def support_for(mode: str) -> Support:
    if mode == "cgroup v1":
        return jailing.require_level(Level.FULL)
    light = probe_light()
    if not light.ok:
        jailing.unavailable(light.explain())
    if mode == "cgroup v2":
        if light.cgroups2 is None:
            jailing.unavailable("no cgroup v2 group can be made here (root on cgroup2)")
        return light
    return Support(Level.LIGHT, light.missing, light.bwrap, light.version)  # no groups


def pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def frozen(jail: Jail) -> bool:
    """Whether the kernel says every process of the jail is stopped (a frozen cgroup's
    tasks show as D: its own files say it)."""
    if jail.group2 is not None:
        return "frozen 1" in (jail.group2.path / "cgroup.events").read_text()
    return states(jail) <= {"T", "t"}  # every one, setsid or not


def states(jail: Jail) -> set[str]:
    """The states of the jail's processes (bubblewrap's init and inside)."""
    assert jail.namespace is not None
    found = set()
    for pid in jail.namespace.pids():
        with contextlib.suppress(OSError):
            found.add(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0])
    return found


@pytest.mark.parametrize("mode", ["cgroup v1", "cgroup v2", "namespace"])
async def test_a_jail_stops_and_continues_and_kills_its_whole_tree(tmp_path: Path, mode: str):
    support = support_for(mode)
    jailer = Jailer(support, lambda _: folder_view(tmp_path), SandboxLimits(turn_cores=0))
    jailer.listen_addresses()
    assert jailer.socket is not None
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(jailer.socket.path))
    listener.listen()
    jailer.opened("127.0.0.1:40124")
    jail = jailer.jail("loops", ["/bin/sh", "-c", LOOPS], {})
    assert (jail.cgroups is not None, jail.cgroups2 is not None) == (
        mode == "cgroup v1",
        mode == "cgroup v2",
    )
    proc = await BotProcess.spawn([], env={}, cwd=None, stderr_path=tmp_path / "out", jail=jail)
    try:
        for _ in range(200):  # bounded: until its three loops run
            if jail.namespace is not None and len(jail.namespace.pids()) >= 6:
                break
            await asyncio.sleep(0.05)
        assert jail.namespace is not None
        pids = jail.namespace.pids()
        jail.turn(False)
        for _ in range(100):  # bounded: the kernel stops each before it runs again
            if frozen(jail):
                break
            await asyncio.sleep(0.02)
        assert frozen(jail), states(jail)
        before = jail.cpu_ns()
        await asyncio.sleep(0.5)  # a stopped bot's CPU does not grow
        after = jail.cpu_ns()
        assert before is not None and after is not None and after - before < 0.1e9
        jail.turn(True)
        assert not states(jail) & {"T", "D"}, states(jail)
        await proc.stop(0)
        for _ in range(100):  # bounded: the kernel ends them a moment after the kill
            if not any(pid_alive(pid) for pid in pids):
                break
            await asyncio.sleep(0.05)
        assert not any(pid_alive(pid) for pid in pids)
        assert jail.report is not None and jail.report.cpu_s is not None
    finally:
        await proc.stop(0)
        listener.close()
        jailer.close()


def test_the_host_says_what_holds_each_limit() -> None:
    limits = SandboxLimits(memory_mb=512, processes=40, cpu_s=30)
    full = Support(Level.FULL)
    lines = "\n".join(enforcement(full, Level.FULL, limits))
    assert "memory: 512 MB, its /tmp and /dev/shm included: the kernel (cgroup v1 memory)" in lines
    bare = "\n".join(enforcement(Support(Level.LIGHT), Level.LIGHT, limits))
    assert "the referee, every 50 ms (proportional set size" in bare
    assert "its PID namespace, the forwarders counted" in bare
    assert "stopped (SIGSTOP to each of its processes)" in bare
    assert "CPU time: 30 s in all" in bare and "a CPU-time rlimit per process too" in bare


def fake_cgroup2(root: Path, offered: str, enabled: str = "") -> Path:
    """A folder tree standing in for a cgroup v2 group that offers ``offered``."""
    root.mkdir()
    (root / "cgroup.controllers").write_text(offered + "\n")
    (root / "cgroup.subtree_control").write_text(enabled + "\n")
    return root


def test_a_delegating_cgroup2_host_gets_the_kernels_limits(tmp_path: Path) -> None:
    """Not yet verified on a real delegating host (none here): the files written and
    read, on a stand-in tree."""
    parent = fake_cgroup2(tmp_path / "service", "cpuset cpu io memory pids", "memory pids")
    groups = Cgroups2.discover(parent)
    assert groups.limited == {"memory", "pids", "cpu"}  # cpu turned on, the others were
    group = groups.create(SandboxLimits(memory_mb=256, processes=20, turn_cores=0.5))
    assert (group.path / "memory.max").read_text() == str(256 << 20)
    assert (group.path / "memory.swap.max").read_text() == "0"
    assert (group.path / "pids.max").read_text() == str(20 + HELPER_TASKS)
    assert (group.path / "cpu.max").read_text() == "50000 100000"
    (group.path / "memory.current").write_text("1234\n")
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.memory() == 1234 and group.breach() is Breach.MEMORY
    (group.path / "cpu.stat").write_text("usage_usec 2500\nuser_usec 2000\n")
    assert group.cpu_ns() == 2_500_000
    (group.path / "cgroup.events").write_text("populated 1\nfrozen 1\n")
    assert group.freeze() and (group.path / "cgroup.freeze").read_text() == "1"
    described = "\n".join(
        enforcement(Support(Level.LIGHT, cgroups2=groups), Level.LIGHT, group.limits)
    )
    assert "the kernel (cgroup v2 memory.max)" in described
    assert "the kernel (cgroup v2 pids.max)" in described
    assert "cpu.max too" in described


def test_a_host_that_delegates_nothing_leaves_the_limits_to_the_referee(tmp_path: Path) -> None:
    parent = fake_cgroup2(tmp_path / "root", "")
    groups = Cgroups2.discover(parent)
    assert groups.limited == frozenset()
    group = groups.create(SandboxLimits())
    assert not (group.path / "memory.max").exists() and group.memory() is None
    assert own_cgroup2("", "0::/\n") is None  # no cgroup2 mounted: none


def test_this_machines_unified_hierarchy_gives_root_a_group() -> None:
    """As the issue found: root can make a group there, with no controller."""
    if os.geteuid() != 0:
        jailing.unavailable("making a cgroup v2 group needs root here")
    unified = Path("/sys/fs/cgroup/unified")
    if not (unified / "cgroup.procs").exists():
        jailing.unavailable("no cgroup v2 hierarchy at /sys/fs/cgroup/unified")
    groups = Cgroups2.discover(own_cgroup2() or unified)
    group = groups.create(SandboxLimits())
    try:
        for name in ("cgroup.procs", "cgroup.kill", "cgroup.freeze", "cgroup.events", "cpu.stat"):
            assert (group.path / name).exists(), name
    finally:
        group.remove()
    assert probe().ok
