"""Submitting a version: one path for ``referee ladder submit`` (local, or over HTTP to the
ladder's web), the web's upload form and ``referee ladder init``'s entries.

An upload is counted against its team's limits before its archive is looked at
(``reserve_upload``: uploads per hour, disk), then unpacked as hostile
(``referee.ladder.archive``), kept as it came (``archives/<sha256>``, for the team's
disk and a later look), and becomes a pending version, which the matchmaker validates
by a match before it plays ranked matches. Every refusal is recorded with its reason
(``uploads.refused``) and raised as the ``LadderError`` that says it; an upload that
fails for any other reason is recorded as refused too, so none is left unsettled.

``pack_folder`` makes the archive of a bot's folder, with only what may leave its
author's machine, and ``pack`` of some files with a ``bot.toml`` beside them, for those
who would rather not make a ``.tar.gz`` by hand.
"""

from __future__ import annotations

import dataclasses
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
from referee.sandbox.private_files import MAX_ENTRIES, Hidden, scan_folder

SKIPPED = ("__pycache__", ".git", ".venv", "node_modules")
"""Tools' folders ``pack_folder`` leaves out (a Node bot that needs its packages brings
them in an archive made by hand)."""


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


@dataclasses.dataclass(frozen=True, slots=True)
class Packed:
    """An archive made by ``pack_folder``: what it holds and what was left out."""

    data: bytes
    files: tuple[tuple[str, int], ...]
    """Each file's name in the archive and its size, in the archive's order."""
    left_out: tuple[Hidden, ...]
    """What of the folder is not packed, top-most first, and why."""

    @property
    def total(self) -> int:
        """The files' bytes, unpacked."""
        return sum(size for _, size in self.files)


def pack_folder(root: Path, *, limit: int = 64 * 1024 * 1024) -> Packed:
    """A ``.tar.gz`` of the bot in the folder ``root`` (its contents at the archive's
    root): only what may leave the author's machine. Left out, by the rule the jail
    uses too (``referee.sandbox.private_files``): private keys, token files, match logs
    (by their first line, whatever their name), bots' output, state, log and
    tournament folders, and what ``.pusoyignore`` lists; and tools' folders
    (``SKIPPED``) and symbolic links. ArchiveError when the folder is too big to check,
    has no ``bot.toml``, or packs past ``limit`` bytes."""
    root = Path(root)
    if not root.is_dir():
        raise ArchiveError(f"{root} is not a folder")
    scan = scan_folder(root)
    if not scan.complete:
        raise ArchiveError(
            f"{root} has over {MAX_ENTRIES} entries, too many to check what of it is "
            "private: pack the bot's own files into a .tar.gz yourself"
        )
    left_out = list(scan.hidden)
    tools: set[Path] = set()
    entries: list[tuple[Path, str]] = []
    for path in scan.files():
        parts = path.relative_to(root).parts
        skipped = next((i for i, part in enumerate(parts[:-1]) if part in SKIPPED), None)
        if skipped is not None:
            tools.add(root.joinpath(*parts[: skipped + 1]))
            continue
        entries.append((path, "/".join(parts)))
    left_out += [Hidden(t, "a tool's folder, not the bot's") for t in tools]
    if FILE_NAME not in {rel for _, rel in entries}:
        why = next((h.why for h in left_out if h.path == root / FILE_NAME), "")
        raise ArchiveError(
            f"{root} has no {FILE_NAME}: say how to run the bot"
            + (f" (it is left out: {why})" if why else "")
        )
    data, files = _tar(entries, None, limit)
    return Packed(data, files, tuple(sorted(left_out, key=lambda h: h.path)))


def pack(files: Sequence[Path], manifest: str, *, limit: int = 64 * 1024 * 1024) -> bytes:
    """A ``.tar.gz`` of ``files``, each at the archive's root, ``manifest`` (a
    ``bot.toml``'s text) beside them; ArchiveError past ``limit`` bytes."""
    entries = []
    for path in files:
        if not path.is_file() or path.is_symlink():
            raise ArchiveError(f"{path} is not a file")
        entries.append((path, path.name))
    return _tar(entries, manifest, limit)[0]


def _tar(
    entries: Sequence[tuple[Path, str]], manifest: str | None, limit: int
) -> tuple[bytes, tuple[tuple[str, int], ...]]:
    buffer = io.BytesIO()
    packed: list[tuple[str, int]] = []
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, rel in entries:
            if manifest is not None and rel == FILE_NAME:
                continue
            info = tar.gettarinfo(str(path), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            with open(path, "rb") as f:
                tar.addfile(info, f)
            packed.append((rel, info.size))
            if buffer.tell() > limit:
                raise ArchiveError(f"the archive is over {limit} bytes")
        if manifest is not None:
            data = manifest.encode()
            info = tarfile.TarInfo(FILE_NAME)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
            packed.append((FILE_NAME, len(data)))
    data = buffer.getvalue()
    if len(data) > limit:
        raise ArchiveError(f"the archive is over {limit} bytes")
    return data, tuple(packed)


__all__ = ["SKIPPED", "Packed", "manifest_text", "pack", "pack_folder", "submit"]
