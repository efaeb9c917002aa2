"""The command that runs one bot in a bubblewrap sandbox.

Three layers, each a few lines of shell so that nothing but ``bwrap``, ``setpriv``
and ``socat`` has to be installed:

1. ``HOST_SCRIPT`` (sh, as root, outside; started by ``setpriv --pdeathsig KILL``):
   joins the bot's cgroups before anything is forked, starts a cap that everything
   the sandbox prints goes through (``head -c`` on a FIFO, unbuffered by ``stdbuf`` so
   that each piece is written as it comes and a bot killed a moment later keeps its
   last words; the rest is read and dropped, so a chatty bot neither fills the disk
   nor blocks; it is all charged to the bot's cgroups), and becomes bubblewrap: its
   exit status is the bot's, and it is killed when the referee dies (the death
   signal survives the ``exec``), taking the whole sandbox with it
   (``--die-with-parent``). The table reads the capped output through a pipe
   (``referee.table.output``), which keeps the limit's bytes and marks a file that
   was cut.
2. bubblewrap: new mount, PID, network, IPC and UTS namespaces; a read-only view of
   the system and of the paths the bot may see; a fresh tmpfs for /tmp and /dev/shm;
   a seccomp filter against the kernel keyrings (``referee.sandbox.seccomp``); its
   arguments come from a file descriptor so that they do not show in /proc/1/cmdline
   inside.
3. ``INNER_SCRIPT`` (sh, inside): starts socat to forward 127.0.0.1:PORT of the
   bot's own network namespace to the referee's Unix socket (the listener stays root,
   so the bot cannot stop it; each connection is served as ``nobody``, with
   TCP_NODELAY: without it a prompt could wait 10 ms for a delayed ACK), waits until it
   listens, sets the open-files limit and becomes the bot: setpriv drops to the
   unprivileged user with no capabilities and no supplementary groups (bubblewrap has
   set no_new_privs, so none can be gained back).

The light jail (``Level.LIGHT``: no root, or no cgroups) keeps layers 1 and 2 but makes
its own unprivileged user namespace, and its limits are rlimits set by ``LIGHT_SCRIPT``
instead of cgroups (CPU seconds, address space, processes, file size: per process, and
breaking one makes a call fail or, for CPU, sends SIGXCPU). As an ordinary user, bubblewrap
runs through an unprivileged user namespace and the bot keeps the user's own id (it sees
nothing of the user's but what is mounted). As root, bubblewrap mounts as root and the
launcher becomes nobody in a user namespace of its own (``unshare``), where the process
limit counts this bot's processes alone.

A visible folder that the bot's user cannot enter (a ``mktemp -d`` folder, mode 0700,
owned by root while the bot runs as nobody) is not bound whole: the sandbox makes a
folder of its own there and binds its entries one by one, so the author's bot still reads
the files it could read under any umask (``enterable``, ``unreadable``).

Every process started costs a few milliseconds (far more on a loaded machine), so the
scripts start as few as they can: dash, not bash; shell built-ins to wait for socat.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from referee.sandbox.limits import HELPER_TASKS, SandboxLimits

SOCKET_INSIDE = "/run/pusoy/referee.sock"
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
"""Mounted read-only in every sandbox."""
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level names that are symlinks into /usr on a merged-/usr system (else folders)."""
FORWARD_WAIT_S = 5
RESERVED = tuple(Path(p) for p in ("/", "/tmp", "/proc", "/dev", "/run"))
"""Never mounted over by a visible path: the sandbox makes these itself."""
NOBODY = 65534
MAX_ENTRY_BINDS = 256
"""A folder its bot cannot enter is rebuilt from at most this many entries."""


class Level(enum.StrEnum):
    """How well a bot can be jailed here, best first."""

    FULL = "full"
    """Root and cgroup v1: bubblewrap, the bot as nobody, the kernel's cgroup limits."""
    LIGHT = "light"
    """bubblewrap in an unprivileged user namespace: a cgroup v2 group of its own where
    the host allows one, else the referee's own accounting of its PID namespace."""
    NONE = "none"
    """No jail: the bot runs bare, as the referee's user."""

    def describe(self) -> str:
        return {
            Level.FULL: "full jail (bubblewrap as nobody, cgroup v1 limits)",
            Level.LIGHT: "light jail (bubblewrap in a user namespace)",
            Level.NONE: "no jail (runs as you, can read your files)",
        }[self]


HOST_SCRIPT = r"""
limit=$1
shift
while [ "$1" != "--" ]; do
  echo $$ >"$1" || { echo "sandbox: cannot join the cgroup $1" >&2; exit 125; }
  shift
done
shift
dir=$(mktemp -d) && mkfifo "$dir/out" || exit 125
{
  exec <"$dir/out"
  rm -rf "$dir"
  stdbuf -o0 head -c "$limit"
  cat >/dev/null
} &
exec "$@" >"$dir/out" 2>&1
"""
INNER_SCRIPT = r"""
port=$1 uid=$2 gid=$3 nofile=$4 wait=$5
shift 5
socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr,nodelay,su=nobody \
  UNIX-CONNECT:/run/pusoy/referee.sock &
want=0100007F:$(printf '%04X' "$port")
listening() {
  while read -r _ local _ state _; do
    [ "$local" = "$want" ] && [ "$state" = 0A ] && return 0
  done </proc/net/tcp
  return 1
}
i=0
until listening; do
  i=$((i + 1))
  if [ "$i" -gt $((wait * 200)) ]; then
    echo "sandbox: the referee forwarder did not start" >&2
    exit 125
  fi
  [ "$i" -gt 50 ] && sleep 0.005
done
ulimit -n "$nofile" || exit 125
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \
  --bounding-set=-all -- "$@"
"""

LIGHT_SCRIPT = r"""
port=$1 nofile=$2 wait=$3 nproc=$4 cpu=$5 vmem=$6 fsize=$7 drop=$8
shift 8
su=
[ "$drop" = 1 ] && su=,su=nobody
socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr,nodelay$su \
  UNIX-CONNECT:/run/pusoy/referee.sock &
want=0100007F:$(printf '%04X' "$port")
listening() {
  while read -r _ local _ state _; do
    [ "$local" = "$want" ] && [ "$state" = 0A ] && return 0
  done </proc/net/tcp
  return 1
}
i=0
until listening; do
  i=$((i + 1))
  if [ "$i" -gt $((wait * 200)) ]; then
    echo "sandbox: the referee forwarder did not start" >&2
    exit 125
  fi
  [ "$i" -gt 50 ] && sleep 0.005
done
ulimit -n "$nofile" && ulimit -v "$vmem" && ulimit -f "$fsize" || exit 125
if [ "$cpu" -gt 0 ]; then
  ulimit -S -t "$cpu" && ulimit -H -t $((cpu + 1)) || exit 125
fi
if [ "$drop" = 1 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    --bounding-set=-all -- unshare --user --map-current-user -- \
    prlimit --nproc="$nproc:$nproc" -- "$@"
fi
ulimit -p "$nproc" || exit 125
exec "$@"
"""


@dataclasses.dataclass(frozen=True, slots=True)
class JailSpec:
    """Everything about one bot's sandbox but its cgroups."""

    argv: Sequence[str]
    """The bot's command, placeholders already replaced."""
    cwd: Path
    env: Mapping[str, str]
    """The bot's whole environment (nothing of the referee's is passed on)."""
    visible: Sequence[Path] = ()
    """Read-only besides the system folders: the bot's files, its runtime."""
    hidden: Sequence[Path] = ()
    """Not to be seen even where they lie inside a visible folder."""
    revealed: Sequence[Path] = ()
    """Files seen even inside a hidden folder: the ones the bot's command names (a
    script kept in the log folder is still the bot's)."""
    referee_socket: Path = Path("/nonexistent")
    port: int = 50051
    """The TCP port on 127.0.0.1 inside that reaches the referee."""
    uid: int = NOBODY
    """The bot's user and group: nobody (socat serves connections as nobody too)."""
    gid: int = NOBODY
    limits: SandboxLimits = dataclasses.field(default_factory=SandboxLimits)
    hostname: str = "bot"
    level: Level = Level.FULL
    """FULL or LIGHT (``LIGHT_SCRIPT``); a light jail run by an ordinary user keeps the
    user's own id (``uid``, ``gid``)."""

    @property
    def drops_to_nobody(self) -> bool:
        """A light jail made by root: bubblewrap mounts as root, the bot runs as nobody."""
        return self.level is Level.LIGHT and os.geteuid() == 0


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``roots`` or below one (by their words: no I/O)."""
    text = str(path)
    return any(text == str(r) or text.startswith(str(r).rstrip("/") + "/") for r in roots)


def _allowed(path: Path, uid: int, gid: int, want: int) -> bool:
    """Whether ``uid`` (in group ``gid`` alone) may ``want`` (os.R_OK | os.X_OK) ``path``
    by its mode bits; the referee's own user asks the kernel."""
    if uid == os.geteuid():
        return os.access(path, want)
    try:
        st = path.stat()
    except OSError:
        return False
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    bits = (st.st_mode >> shift) & 0o7
    need = (4 if want & os.R_OK else 0) | (1 if want & os.X_OK else 0)
    return bits & need == need


def enterable(path: Path, uid: int, gid: int) -> bool:
    """Whether the bot's user can list and enter the folder ``path`` (or read the file)."""
    want = os.R_OK | os.X_OK if path.is_dir() else os.R_OK
    return _allowed(path, uid, gid, want)


def unreadable(
    paths: Iterable[Path], hidden: Iterable[Path], uid: int, gid: int, limit: int = 2000
) -> list[Path]:
    """What the bot's user could not read of ``paths`` (folders walked, at most ``limit``
    entries in all), after the sandbox has rebuilt the folders it cannot enter
    (``mount_args``); ``hidden`` ones are not looked at."""
    out: list[Path] = []
    masked = [Path(h) for h in hidden]
    seen = 0
    stack = sorted({Path(p) for p in paths}, reverse=True)
    top = set(stack)
    while stack and seen < limit:
        path = stack.pop()
        seen += 1
        if _inside(path, masked) or not path.exists():
            continue
        rebuilt = path in top and path.is_dir() and _rebuildable(path)
        if not rebuilt and not enterable(path, uid, gid):
            out.append(path)
            continue
        if path.is_dir() and not path.is_symlink():
            try:
                stack.extend(sorted(path.iterdir(), reverse=True))
            except OSError:
                out.append(path)
    return out


def _rebuildable(path: Path) -> bool:
    try:
        return sum(1 for _ in path.iterdir()) <= MAX_ENTRY_BINDS
    except OSError:
        return False


def _bind_entries(path: Path) -> list[str]:
    """A folder of the sandbox's own at ``path`` (mode 0755) with each entry of the real
    one bound in it: for a folder the bot's user cannot enter."""
    out = ["--perms", "0755", "--dir", str(path)]
    for entry in sorted(path.iterdir()):
        if entry.is_symlink():
            out += ["--symlink", os.readlink(entry), str(entry)]
        elif stat.S_ISDIR(entry.lstat().st_mode) or stat.S_ISREG(entry.lstat().st_mode):
            out += ["--ro-bind", str(entry), str(entry)]
    return out


def mount_args(spec: JailSpec, seccomp_fd: int | None = None) -> list[str]:
    """bubblewrap's options for the sandbox (its namespaces, mounts and environment);
    ``seccomp_fd``: a file descriptor holding the seccomp filter (``referee.sandbox.seccomp``)."""
    as_user = spec.level is Level.LIGHT and not spec.drops_to_nobody
    out = [
        *(["--unshare-user"] if as_user else []),
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        spec.hostname,
        "--cap-drop",
        "ALL",
        # Only for the launcher inside, to become the bot's user; setpriv drops them.
        *(
            ()
            if as_user
            else ("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
        ),
        "--clearenv",
    ]
    if seccomp_fd is not None:
        out += ["--seccomp", str(seccomp_fd)]
    for key, value in sorted(spec.env.items()):
        out += ["--setenv", key, value]
    roots: list[Path] = []
    for name in SYSTEM_DIRS:
        if Path(name).is_dir():
            out += ["--ro-bind", name, name]
            roots.append(Path(name))
    for name in ROOT_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            out += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            out += ["--ro-bind", str(path), str(path)]
            roots.append(path)
    tmp = str(spec.limits.tmp_bytes)
    out += ["--proc", "/proc", "--dev", "/dev"]
    out += ["--perms", "1777", "--size", tmp, "--tmpfs", "/tmp"]
    out += ["--perms", "1777", "--size", tmp, "--tmpfs", "/dev/shm"]
    out += ["--perms", "0755", "--dir", "/run", "--perms", "0755", "--dir", "/run/pusoy"]
    out += ["--ro-bind", str(spec.referee_socket), SOCKET_INSIDE]
    made: set[Path] = {Path("/"), Path("/run"), Path("/run/pusoy"), Path("/tmp")}
    for path in sorted({Path(p) for p in spec.visible}, key=lambda p: (len(p.parts), p)):
        if path in RESERVED or not path.is_absolute() or not path.exists():
            continue
        if _inside(path, roots):
            continue
        for parent in reversed(path.parents):
            if parent not in made and not _inside(parent, roots):
                out += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        if path.is_dir() and not enterable(path, spec.uid, spec.gid) and _rebuildable(path):
            out += _bind_entries(path)
        else:
            out += ["--ro-bind", str(path), str(path)]
        roots.append(path)
    masked: list[Path] = []
    for path in sorted({Path(p) for p in spec.hidden}):
        if not path.exists() or not _inside(path, roots) or _inside(path, masked):
            continue  # not visible anyway
        masked.append(path)
        if path.is_dir():
            out += ["--perms", "0755", "--tmpfs", str(path)]
            for file in sorted({Path(f) for f in spec.revealed}):
                if path in file.parents and file.is_file():
                    for parent in reversed(file.parents):
                        if path in parent.parents:
                            out += ["--perms", "0755", "--dir", str(parent)]
                    out += ["--ro-bind", str(file), str(file)]
            out += ["--remount-ro", str(path)]
        else:
            out += ["--ro-bind", "/dev/null", str(path)]
    # Its working folder is where its command's relative paths point, shown or not (a
    # home folder is never shown whole, /tmp is the jail's own): made if need be.
    cwd = spec.cwd if spec.cwd.is_absolute() else Path("/tmp")
    if not _inside(cwd, roots):
        for folder in [*reversed(cwd.parents), cwd]:
            if folder not in made and not _inside(folder, roots):
                out += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
    # Nothing but /tmp and /dev/shm (sized) is writable: the root's tmpfs has no size.
    out += ["--remount-ro", "/", "--chdir", str(cwd)]
    return out


def inner_command(spec: JailSpec) -> list[str]:
    """What bubblewrap runs: the launcher inside, then the bot."""
    if spec.level is Level.LIGHT:
        limits = spec.limits
        return [
            "/bin/sh",
            "-c",
            LIGHT_SCRIPT,
            "pusoy-sandbox",
            str(spec.port),
            str(limits.open_files),
            str(FORWARD_WAIT_S),
            str(limits.processes + HELPER_TASKS),
            str(math.ceil(limits.cpu_s)),
            str(limits.memory_mb * 1024),  # ulimit -v: KiB
            str(limits.tmp_bytes // 512),  # ulimit -f: 512-byte blocks
            "1" if spec.drops_to_nobody else "0",
            *spec.argv,
        ]
    return [
        "/bin/sh",
        "-c",
        INNER_SCRIPT,
        "pusoy-sandbox",
        str(spec.port),
        str(spec.uid),
        str(spec.gid),
        str(spec.limits.open_files),
        str(FORWARD_WAIT_S),
        *spec.argv,
    ]


def host_command(
    spec: JailSpec, cgroup_procs: Sequence[Path], args_fd: int, bwrap: str = "bwrap"
) -> list[str]:
    """The whole command to spawn; bubblewrap reads its options from ``args_fd``."""
    return [
        "setpriv",
        "--pdeathsig",
        "KILL",
        "--",
        "/bin/sh",
        "-c",
        HOST_SCRIPT,
        "pusoy-sandbox",
        str(spec.limits.stderr_bytes + 1),
        *(str(p) for p in cgroup_procs),
        "--",
        bwrap,
        "--args",
        str(args_fd),
        "--",
        *inner_command(spec),
    ]


def encode_args(args: Sequence[str]) -> bytes:
    """bubblewrap's ``--args`` format: NUL-terminated words."""
    for word in args:
        if "\0" in word:
            raise ValueError(f"a sandbox argument holds a NUL byte: {word!r}")
    return b"".join(w.encode() + b"\0" for w in args)


__all__ = [
    "HOST_SCRIPT",
    "INNER_SCRIPT",
    "LIGHT_SCRIPT",
    "MAX_ENTRY_BINDS",
    "NOBODY",
    "SOCKET_INSIDE",
    "JailSpec",
    "Level",
    "encode_args",
    "enterable",
    "host_command",
    "inner_command",
    "mount_args",
    "unreadable",
]
