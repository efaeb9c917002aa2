"""``referee ladder``: the command line of a standing competition (docs/ladder.md).

The parser is built here without importing the ladder (which needs the ``ladder``
extra); each command imports what it uses when it runs, and a missing extra is one
line saying how to install it (``referee.cli.main``, for every extra's commands).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.cli.flags import add_command, error_exit
from referee.cli.ladder_client import check_key_url, wait_verdict

if TYPE_CHECKING:
    from referee.ladder.config import LadderConfig

KEY_ENV = "PUSOY_LADDER_KEY"
CONFIG_HELP = "the ladder's TOML file"
LadderCommand = Callable[[argparse.Namespace], int]

EPILOG = """\
examples:
  referee ladder init examples/ladder.toml            # the database, the house's bots, entries
  referee ladder team create examples/ladder.toml alpha   # prints alpha's API key, once
  referee ladder run examples/ladder.toml             # matchmaker and workers (Ctrl-C stops)
  referee ladder serve examples/ladder.toml --http 127.0.0.1:8080
  PUSOY_LADDER_KEY=pdl_... referee ladder submit --url http://127.0.0.1:8080 mybot ./mybot/
  referee ladder submit --dry-run mybot ./mybot/      # the files it would send; sends nothing
  referee ladder status examples/ladder.toml
  referee ladder retire examples/ladder.toml alpha mybot   # its active version leaves
  referee ladder backup examples/ladder.toml ladder-backup.db

See docs/ladder.md: from nothing to a running ladder, and from a key to a ranked bot.
"""


def add_parser(sub: Any) -> None:
    """The ``ladder`` command and its subcommands, on ``referee``'s subparsers."""
    ladder = add_command(
        sub,
        "ladder",
        "a standing competition: teams submit bots, matches are played continuously, "
        "a public leaderboard",
        EPILOG,
    )
    cmds = ladder.add_subparsers(dest="ladder_command", required=True, metavar="COMMAND")

    def command(
        name: str, help: str, example: str, run: LadderCommand, *, config: bool = True
    ) -> argparse.ArgumentParser:
        """A ladder command that ``run_ladder_command`` runs with ``run``; with ``config``,
        its first argument is the ladder's TOML file."""
        p: argparse.ArgumentParser = cmds.add_parser(
            name,
            help=help,
            description=help,
            epilog=f"example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=run_ladder_command, ladder_func=run)
        if config:
            p.add_argument("config", help=CONFIG_HELP)
        return p

    command(
        "init",
        "make the ladder's folder and database, its house bots, and its config's [[entry]] "
        "bots (their teams' keys are printed once)",
        "referee ladder init examples/ladder.toml",
        _cmd_init,
    )

    team = command(
        "team",
        "make a team (its API key is printed once) or give it a new key",
        "referee ladder team create examples/ladder.toml alpha",
        _cmd_team,
        config=False,
    )
    team.add_argument("action", choices=("create", "rotate-key"))
    team.add_argument("config", help=CONFIG_HELP)
    team.add_argument("name", help="the team's name: 1 to 40 of a-z 0-9 _ -")

    submit = command(
        "submit",
        "upload a new version of a bot: an archive (.tar.gz or .zip with a bot.toml), or a "
        "folder that is packed first with only the bot (never keys, tokens, match logs, "
        "state or log folders, nor what .pusoyignore lists); locally (CONFIG) or to a "
        "ladder's web (--url). The files and their total size are printed before sending",
        f"{KEY_ENV}=pdl_... referee ladder submit --url https://ladder.example mybot ./mybot/"
        "\n  referee ladder submit --dry-run mybot ./mybot/    # what would be sent, nothing sent",
        _cmd_submit,
        config=False,
    )
    submit.add_argument("bot", help="the bot's name under your team")
    submit.add_argument("archive", help="a .tar.gz or .zip with bot.toml, or a folder")
    submit.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be sent (the files, their total size, what is left out) "
        "and send nothing",
    )
    where = submit.add_mutually_exclusive_group()
    where.add_argument("--config", help="the ladder's TOML file (on the ladder's machine)")
    where.add_argument("--url", help="the ladder's web address (https, or http on loopback)")
    submit.add_argument(
        "--key", help=f"the team's API key (better: {KEY_ENV}, kept out of the process list)"
    )
    submit.add_argument("--wait", action="store_true", help="wait for the validation's verdict")

    run = command(
        "run",
        "play the ladder: the matchmaker and one worker process per core, each with its own "
        "referee; bots always jailed (refuses where no jail can be made)",
        "referee ladder run examples/ladder.toml --metrics 127.0.0.1:9465",
        _cmd_run,
    )
    run.add_argument("--workers", type=int, metavar="N", help="worker processes (default: config)")
    run.add_argument(
        "--no-matchmaker",
        action="store_true",
        help="workers only (another machine of a ladder on PostgreSQL)",
    )
    run.add_argument("--metrics", metavar="HOST:PORT", help="serve Prometheus metrics there")
    run.add_argument("--seed", help="seed of the matchmaker's random choices (tests)")
    run.add_argument("--log-level", default="info", help="the workers' log level")

    serve = command(
        "serve",
        "the ladder's public web: leaderboard, bots, matches, queue, live matches, teams' "
        "uploads; JSON under /api/",
        "referee ladder serve examples/ladder.toml --http 127.0.0.1:8080",
        _cmd_serve,
    )
    serve.add_argument("--http", required=True, metavar="HOST:PORT", help="where to listen")
    serve.add_argument("--metrics", metavar="HOST:PORT", help="serve Prometheus metrics there")
    serve.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--tls-key", help="... and this key")
    serve.add_argument(
        "--insecure",
        action="store_true",
        help="accept keys over plain HTTP from any address: only behind a TLS proxy on a "
        "network you trust (a container's published port is not loopback)",
    )

    status = command(
        "status",
        "the leaderboard's top, the queue, pending and rejected versions, failures",
        "referee ladder status examples/ladder.toml",
        _cmd_status,
    )
    status.add_argument("--json", action="store_true", help="as JSON (the web's /api/status)")

    retire = command(
        "retire",
        "take a version off the ladder: its queued matches are cancelled, its page, "
        "results and rating history stay (by default the bot's active version)",
        'referee ladder retire examples/ladder.toml alpha mybot --reason "breaks the rules"',
        _cmd_retire,
    )
    retire.add_argument("team", help="the team's name")
    retire.add_argument("bot", help="the bot's name under that team")
    retire.add_argument(
        "--version", type=int, metavar="N", help="its version N (default: the active one)"
    )
    retire.add_argument(
        "--reason",
        metavar="TEXT",
        default="retired by the ladder's organiser",
        help="shown on the bot's page (one line, at most 300 characters)",
    )

    backup = command(
        "backup",
        "a consistent copy of the database while the ladder runs (SQLite's online backup, "
        "or pg_dump's custom format)",
        "referee ladder backup examples/ladder.toml ladder-backup.db",
        _cmd_backup,
    )
    backup.add_argument("out", help="the backup file to write (must not exist)")


def run_ladder_command(args: argparse.Namespace) -> int:
    """Run a ``referee ladder`` command; errors the ladder raises are one line each."""
    from referee.ladder.errors import LadderError
    from referee.sandbox import SandboxUnavailable
    from referee.toml_table import ConfigError

    try:
        code: int = args.ladder_func(args)
    except (LadderError, ConfigError, SandboxUnavailable, OSError) as exc:
        return error_exit(f"ladder {args.ladder_command}", exc)
    return code


def _config(path: str) -> LadderConfig:
    from referee.ladder.config import load_ladder_config

    return load_ladder_config(Path(path))


def _made(path: str) -> LadderConfig:
    """The config of a ladder that ``referee ladder init`` has made: every command but
    ``init`` and ``run`` (which make what is missing) needs its database."""
    from referee.ladder.errors import LadderError
    from referee.ladder.storage.db import sqlite_file
    from referee.program import referee_program

    config = _config(path)
    database = sqlite_file(config.database)
    if database is not None and not database.is_file():
        raise LadderError(
            f"{path} has no ladder yet (no database {database}): make it first with "
            f"{referee_program()} ladder init {shlex.quote(path)}"
        )
    return config


def _key(args: argparse.Namespace) -> str:
    key = args.key or os.environ.get(KEY_ENV, "")
    if not key:
        raise SystemExit(f"referee ladder submit: give the team's key: {KEY_ENV} or --key")
    return str(key)


# -- the commands ------------------------------------------------------------------------


def _cmd_init(args: argparse.Namespace) -> int:
    from referee.ladder.errors import Conflict
    from referee.ladder.play.runner import prepare
    from referee.ladder.uploads.submit import manifest_text, pack, submit

    config = _config(args.config)
    store = prepare(config)
    try:
        print(f"Ladder {config.name!r}: {config.folder} (database {_shown(config.database)})")
        print(f"House bots: {', '.join(config.anchors)}")
        for entry in config.entries:
            try:
                made = store.create_team(entry.team)
                print(f"Team {entry.team}: its API key (shown once): {made.key}")
            except Conflict:
                pass  # made by an earlier init, or by hand
            if _has_bot(store, entry.team, entry.bot):
                print(f"  {entry.team}/{entry.bot}: already entered")
                continue
            manifest = manifest_text(entry.runtime, entry.command, entry.description)
            data = pack(entry.files, manifest, limit=config.archive_limits.max_archive_bytes)
            scratch = config.work_dir / f"entry-{entry.team}-{entry.bot}.tar.gz"
            scratch.write_bytes(data)
            try:
                version = submit(store, config, entry.team, entry.bot, scratch)
            finally:
                scratch.unlink(missing_ok=True)
            print(f"  {version.label}: uploaded, validated when the ladder runs")
        print(f"Next: referee ladder run {args.config}   (and serve it: referee ladder serve)")
    finally:
        store.close()
    return 0


def _has_bot(store: Any, team: str, bot: str) -> bool:
    from sqlalchemy import select

    from referee.ladder.storage.schema import bots, teams

    with store.reading() as conn:
        found = conn.execute(
            select(bots.c.id)
            .select_from(bots.join(teams))
            .where(teams.c.name == team, bots.c.name == bot)
        ).first()
    return found is not None


def _shown(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _cmd_team(args: argparse.Namespace) -> int:
    from referee.ladder.storage.store import LadderStore

    config = _config(args.config)
    config.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = LadderStore.open(config.database)
    try:
        made = (
            store.create_team(args.name) if args.action == "create" else store.rotate_key(args.name)
        )
    finally:
        store.close()
    where = config.public_url or "the ladder's web"
    print(f"Team {made.team.name}: API key (shown this once; only its hash is kept):")
    print(made.key)
    print(
        f"Give it to the team, over a private channel. They submit with it "
        f"({KEY_ENV}=... referee ladder submit --url {where} BOT ARCHIVE) and sign in to "
        "their team page with it."
    )
    return 0


SHOWN_FILES = 100
"""Files ``submit`` lists one by one; the rest are counted."""


def _archive_file(path: Path, scratch: Path, limit: int) -> Path:
    """The archive to upload, its contents printed first: the file as it is, or a
    folder packed into ``scratch`` with only the bot."""
    from referee.ladder.uploads.submit import pack_folder

    if not path.is_dir():
        _show_archive(path)
        return path
    packed = pack_folder(path, limit=limit)
    print(
        f"Packing {path}: {len(packed.files)} files, {packed.total:,} bytes "
        f"({len(packed.data):,} bytes packed):"
    )
    _list(packed.files)
    if packed.left_out:
        print("Left out (never sent):")
        _list(
            [
                (h.path.relative_to(path).as_posix() + ("/" if h.path.is_dir() else ""), h.why)
                for h in packed.left_out
            ]
        )
    scratch.write_bytes(packed.data)
    return scratch


def _list(rows: list[tuple[str, int | str]] | tuple[tuple[str, int], ...]) -> None:
    for name, what in rows[:SHOWN_FILES]:
        print(f"  {name}  {what:,}" if isinstance(what, int) else f"  {name}  {what}")
    if len(rows) > SHOWN_FILES:
        print(f"  ... and {len(rows) - SHOWN_FILES} more")


def _show_archive(path: Path) -> None:
    """An archive's files and their total size, as its headers say (the ladder checks
    all of it again)."""
    import tarfile
    import zipfile

    members: list[tuple[str, int | str]] = []
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                members = [(i.filename, i.file_size) for i in zf.infolist() if not i.is_dir()]
        else:
            with tarfile.open(path, "r:*") as tar:
                members = [(m.name, m.size) for m in tar if m.isfile()]
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise SystemExit(f"referee ladder submit: {path} is not a .tar.gz or .zip: {exc}") from None
    total = sum(size for _, size in members if isinstance(size, int))
    print(
        f"Sending {path} as it is: {len(members)} files, {total:,} bytes "
        f"({path.stat().st_size:,} bytes packed):"
    )
    _list(members)


def _cmd_submit(args: argparse.Namespace) -> int:
    import tempfile

    if not args.dry_run and not (args.url or args.config):
        raise SystemExit("referee ladder submit: give --url (or --config on the ladder's machine)")
    key = "" if args.dry_run else _key(args)
    source = Path(args.archive)
    if not source.exists():
        raise SystemExit(f"referee ladder submit: {source} does not exist")
    with tempfile.TemporaryDirectory(prefix="ladder-submit-") as tmp:
        archive = _archive_file(source, Path(tmp) / "bot.tar.gz", 1 << 30)
        if args.dry_run:
            print("Dry run: nothing sent.")
            return 0
        if args.url:
            answer = _submit_http(args.url, key, args.bot, archive)
        else:
            answer = _submit_local(_made(args.config), key, args.bot, archive)
    if "error" in answer:
        print(f"referee ladder submit: refused: {answer['error']}", file=sys.stderr)
        return 1
    print(f"{answer['label']}: uploaded ({answer['state']}); it plays a validation match first")
    if args.wait:
        database = None if args.url else _config(args.config).database
        return wait_verdict(int(answer["id"]), url=args.url, database=database, key=key)
    return 0


def _submit_local(config: LadderConfig, key: str, bot: str, archive: Path) -> dict[str, Any]:
    from referee.ladder.errors import LadderError
    from referee.ladder.storage.store import LadderStore
    from referee.ladder.uploads.submit import submit
    from referee.ladder.web.content import version_json

    store = LadderStore.open(config.database)
    try:
        team = store.team_by_key(key)
        try:
            version = submit(store, config, team.name, bot, archive)
        except LadderError as exc:
            return {"error": str(exc)}
        return version_json(version)
    finally:
        store.close()


def _submit_http(url: str, key: str, bot: str, archive: Path) -> dict[str, Any]:
    import asyncio

    import aiohttp

    check_key_url(url)

    async def post() -> dict[str, Any]:
        form = aiohttp.FormData()
        form.add_field("bot", bot)
        with archive.open("rb") as f:
            form.add_field("archive", f, filename=archive.name)
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session,
                session.post(
                    url.rstrip("/") + "/api/versions",
                    data=form,
                    headers={"Authorization": f"Bearer {key}"},
                ) as response,
            ):
                try:
                    answer: dict[str, Any] = await response.json(content_type=None)
                except ValueError:
                    text = await response.text()
                    answer = {"error": f"HTTP {response.status}: {text[:300]}"}
                return answer

    return asyncio.run(post())


def _cmd_run(args: argparse.Namespace) -> int:
    from referee.ladder.play.runner import run_ladder

    if args.workers is not None and args.workers < 0:
        raise SystemExit("referee ladder run: --workers is 0 or more")
    return run_ladder(
        _config(args.config),
        workers=args.workers,
        matchmaker=not args.no_matchmaker,
        metrics=args.metrics,
        log_level=args.log_level,
        seed=args.seed,
    )


def _cmd_serve(args: argparse.Namespace) -> int:
    from referee.ladder.web.site import serve_ladder

    if bool(args.tls_cert) != bool(args.tls_key):
        raise SystemExit("referee ladder serve: give both --tls-cert and --tls-key")
    return serve_ladder(
        _made(args.config),
        args.http,
        metrics=args.metrics,
        tls=(Path(args.tls_cert), Path(args.tls_key)) if args.tls_cert else None,
        insecure=args.insecure,
    )


def _cmd_status(args: argparse.Namespace) -> int:
    from referee.ladder.storage.store import LadderStore
    from referee.ladder.web.content import status_json

    config = _made(args.config)
    store = LadderStore.open(config.database, migrate=False)
    try:
        status = status_json(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    q = status["queue"]
    print(
        f"Ladder {config.name!r}: {q['queued']} matches queued ({q['validation']} validation), "
        f"{q['running']} running, {status['matches_per_minute']} finished in the last minute, "
        f"{status['finished']} in all"
    )
    print(f"{'#':>3}  {'version':<32} {'rating (95%)':<22} {'matches':>7}")
    for row in status["leaderboard"][:20]:
        rating = f"{row['mu']:.1f} [{row['low']:.1f}, {row['high']:.1f}]"
        print(f"{row['rank']:>3}  {row['label']:<32} {rating:<22} {row['matches']:>7}")
    for v in status["pending"]:
        print(f"pending: {v['label']}")
    for v in status["rejected"][:10]:
        print(f"rejected: {v['label']}: {v['reason']}")
    for cause, n in sorted(status["failures"].items()):
        print(f"failed matches ({cause}): {n}")
    for problem in status["problems"]:
        print(f"inconsistent: {problem}", file=sys.stderr)
    return 1 if status["problems"] else 0


def _cmd_retire(args: argparse.Namespace) -> int:
    from referee.ladder.storage.store import LadderStore, check_name, check_reason

    check_name("team", args.team)
    check_name("bot", args.bot)
    reason = check_reason(args.reason)  # all before the database is opened
    config = _made(args.config)
    store = LadderStore.open(config.database, migrate=False)
    try:
        version = store.find_version(args.team, args.bot, args.version)
        retired = store.retire(version.id, reason)
    finally:
        store.close()
    print(
        f"{retired.label}: retired ({retired.reason}). Its queued matches are cancelled "
        f"(running ones finish); its results and history stay on /bots/{retired.team}/"
        f"{retired.bot}."
    )
    return 0


def _cmd_backup(args: argparse.Namespace) -> int:
    from referee.ladder.storage.backup import backup

    config = _made(args.config)
    out = Path(args.out)
    backup(config.database, out)
    print(
        f"Backed up the database to {out}. The files: copy {config.versions_dir}, "
        f"{config.archives_dir}, {config.logs_dir} and {config.state_dir} too (rsync copies "
        "only what is new; they never change once written). docs/ladder.md says how to restore."
    )
    return 0


__all__ = ["KEY_ENV", "add_parser", "check_key_url", "run_ladder_command"]
