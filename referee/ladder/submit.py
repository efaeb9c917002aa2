"""Submitting a version: one path for ``referee ladder submit`` (local, or over HTTP to the
ladder's web), the web's upload form and ``referee ladder init``'s entries.

An upload is counted against its team's limits before its archive is looked at
(``reserve_upload``: uploads per hour, disk), then unpacked as hostile
(``referee.ladder.archive``), kept as it came (``archives/<sha256>``, for the team's
disk and a later look), and becomes a pending version, which the matchmaker validates
by a match before it plays ranked matches. Every refusal is recorded with its reason
(``uploads.refused``) and raised as the ``LadderError`` that says it; an upload that
fails for any other reason is recorded as refused too, so none is left unsettled.

``pack`` makes the archive of a folder or of some files (a ``bot.toml`` beside them),
for those who would rather not make a ``.tar.gz`` by hand.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import select

from referee.ladder.archive import remove_tree, unpack
from referee.ladder.config import LadderConfig
from referee.ladder.errors import ArchiveError, LadderError
from referee.ladder.manifest import FILE_NAME, parse_manifest
from referee.ladder.schema import versions
from referee.ladder.store import LadderStore
from referee.ladder.types import Version

SKIPPED = ("__pycache__", ".git", ".venv", "node_modules")
"""Folders ``pack`` leaves out."""


def submit(store: LadderStore, config: LadderConfig, team: str, bot: str, archive: Path) -> Version:
    """A new pending version of ``team``'s ``bot`` from the archive file at ``archive``
    (LadderError, ArchiveError, QuotaExceeded... saying why not)."""
    try:
        size = os.lstat(archive).st_size
    except OSError as exc:
        raise ArchiveError(f"cannot read the archive: {exc.strerror}") from None
    upload_id = store.reserve_upload(team, size, config.team_limits)
    try:
        unpacked = unpack(archive, config.versions_dir, config.archive_limits)
    except LadderError as exc:
        store.refuse_upload(upload_id, str(exc))
        raise
    except Exception:  # a fault of the ladder's: the upload is settled all the same
        store.refuse_upload(upload_id, "the ladder failed to unpack it (its fault, not yours)")
        raise
    try:
        kept = config.archives_dir / unpacked.sha256
        if not kept.exists():
            config.archives_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=config.archives_dir, delete=False) as out:
                with open(archive, "rb") as src:
                    shutil.copyfileobj(src, out)
                os.fchmod(out.fileno(), 0o400)
            os.replace(out.name, kept)
        return store.add_version(
            upload_id,
            bot,
            archive_sha256=unpacked.sha256,
            archive_format=unpacked.format,
            archive_bytes=unpacked.archive_bytes,
            unpacked_bytes=unpacked.unpacked_bytes,
            files=unpacked.files,
            manifest_json=unpacked.manifest.to_json(),
            runtime=unpacked.manifest.runtime,
            limits=config.team_limits,
        )
    except Exception as exc:
        why = str(exc) if isinstance(exc, LadderError) else "the ladder failed to keep it"
        store.refuse_upload(upload_id, why)
        if not _used(store, unpacked.sha256):
            remove_tree(unpacked.folder)
            (config.archives_dir / unpacked.sha256).unlink(missing_ok=True)
        raise


def _used(store: LadderStore, sha: str) -> bool:
    with store.reading() as conn:
        found = conn.execute(select(versions.c.id).where(versions.c.archive_sha256 == sha))
        return found.first() is not None


def manifest_text(runtime: str, command: Sequence[str], description: str = "") -> str:
    """A ``bot.toml``, checked as an upload's would be."""
    words = ", ".join(_toml_string(w) for w in command)
    text = f"runtime = {_toml_string(runtime)}\ncommand = [{words}]\n"
    if description:
        text += f"description = {_toml_string(description)}\n"
    parse_manifest(text.encode())
    return text


def _toml_string(text: str) -> str:
    out = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    tomllib.loads(f"x = {out}")  # a control character would not survive: refused here
    return out


def pack(
    sources: Sequence[Path], manifest: str | None = None, *, limit: int = 64 * 1024 * 1024
) -> bytes:
    """A ``.tar.gz`` of ``sources``: one folder (its contents at the archive's root,
    with its own ``bot.toml`` unless ``manifest`` is given), or files (each at the root,
    ``manifest`` beside them). Links and ``SKIPPED`` folders are left out; ArchiveError
    past ``limit`` bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        entries: list[tuple[Path, str]] = []
        if len(sources) == 1 and sources[0].is_dir():
            root = sources[0]
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
                for name in sorted(filenames):
                    path = Path(dirpath) / name
                    rel = path.relative_to(root).as_posix()
                    if not path.is_symlink() and not (manifest and rel == FILE_NAME):
                        entries.append((path, rel))
            if manifest is None and not (root / FILE_NAME).is_file():
                raise ArchiveError(f"{root} has no {FILE_NAME}: say how to run the bot")
        else:
            for path in sources:
                if not path.is_file() or path.is_symlink():
                    raise ArchiveError(f"{path} is not a file")
                entries.append((path, path.name))
            if manifest is None:
                raise ArchiveError(f"files alone need a {FILE_NAME}")
        for path, rel in entries:
            info = tar.gettarinfo(str(path), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as f:
                tar.addfile(info, f)
            if buffer.tell() > limit:
                raise ArchiveError(f"the archive is over {limit} bytes")
        if manifest is not None:
            data = manifest.encode()
            info = tarfile.TarInfo(FILE_NAME)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    if len(data) > limit:
        raise ArchiveError(f"the archive is over {limit} bytes")
    return data


__all__ = ["SKIPPED", "manifest_text", "pack", "submit"]
