"""The command that runs one bot in a bubblewrap sandbox.

Three layers, each a few lines of shell so that nothing but ``bwrap``, ``setpriv``
and ``socat`` has to be installed:

1. ``HOST_SCRIPT`` (sh, as root, outside): joins the bot's cgroups before anything
   is forked, runs bubblewrap, and pipes everything the sandbox prints through a cap
   (``head -c``, unbuffered by ``stdbuf`` so that each piece is written as it comes
   and a bot killed a moment later keeps its last words; the rest is read and
   dropped, so a chatty bot neither fills the disk nor blocks; it is all charged to
   the bot's cgroups). Its exit status is bubblewrap's, which is the bot's. The table
   reads the capped output through a pipe (``referee.table.output``), which keeps the
   limit's bytes and marks a file that was cut.
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

Every process started costs a few milliseconds (far more on a loaded machine), so the
scripts start as few as they can: dash, not bash; shell built-ins to wait for socat.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from referee.sandbox.limits import Limits

SOCKET_INSIDE = "/run/pusoy/referee.sock"
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
"""Mounted read-only in every sandbox."""
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level names that are symlinks into /usr on a merged-/usr system (else folders)."""
FORWARD_WAIT_S = 5
RESERVED = tuple(Path(p) for p in ("/", "/tmp", "/proc", "/dev", "/run"))
"""Never mounted over by a visible path: the sandbox makes these itself."""

HOST_SCRIPT = r"""
limit=$1
shift
while [ "$1" != "--" ]; do
  echo $$ >"$1" || { echo "sandbox: cannot join the cgroup $1" >&2; exit 125; }
  shift
done
shift
exec 3>&1
status=$(
  {
    { "$@" 2>&1 3>&- 4>&-; echo $? >&4; } |
      { stdbuf -o0 head -c "$limit" >&3; cat >/dev/null; }
  } 4>&1
)
exit "$status"
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
    referee_socket: Path = Path("/nonexistent")
    port: int = 50051
    """The TCP port on 127.0.0.1 inside that reaches the referee."""
    uid: int = 65534
    """The bot's user and group: nobody (socat serves connections as nobody too)."""
    gid: int = 65534
    limits: Limits = dataclasses.field(default_factory=Limits)
    hostname: str = "bot"


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def mount_args(spec: JailSpec, seccomp_fd: int | None = None) -> list[str]:
    """bubblewrap's options for the sandbox (its namespaces, mounts and environment);
    ``seccomp_fd``: a file descriptor holding the seccomp filter (``referee.sandbox.seccomp``)."""
    out = [
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
        *("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"),
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
        out += ["--ro-bind", str(path), str(path)]
        roots.append(path)
    for path in sorted({Path(p) for p in spec.hidden}):
        if not path.exists() or not _inside(path, roots):
            continue  # not visible anyway
        if path.is_dir():
            out += ["--perms", "0755", "--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            out += ["--ro-bind", "/dev/null", str(path)]
    out += ["--chdir", str(spec.cwd) if _inside(spec.cwd, roots) else "/tmp"]
    return out


def inner_command(spec: JailSpec) -> list[str]:
    """What bubblewrap runs: the launcher inside, then the bot."""
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
    "SOCKET_INSIDE",
    "JailSpec",
    "encode_args",
    "host_command",
    "inner_command",
    "mount_args",
]
