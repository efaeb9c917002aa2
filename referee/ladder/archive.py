"""Unpacking an uploaded bot archive, which comes from someone the ladder does not trust.

Formats: ``.tar.gz`` and ``.zip``, told apart by their first bytes (a name proves
nothing). The rules, each checked by a hostile test (tests/ladder/test_archive.py):

- **Sizes.** The archive is at most ``max_archive_bytes``. Headers are never trusted:
  every byte decompressed is counted as it comes out, and unpacking stops at
  ``max_unpacked_bytes`` (a zip bomb, or a tar.gz of a terabyte of zeros, costs the
  ladder that many bytes and no more). A zip's declared sizes are also checked before
  anything is decompressed, as a cheap first refusal. The gzip stream under a tar is
  capped as a whole, headers and padding included, so a tar header claiming a huge
  extended header or name cannot make ``tarfile`` read without bound either.
- **Entries.** At most ``max_files`` (files and folders); a zip's count is checked from
  its central directory before anything is decompressed, a tar's as it streams.
- **Names.** Relative, UTF-8, no ``..``, no empty part, no backslash, no control
  character, at most ``max_depth`` folders deep and ``max_path_bytes`` long; no name
  twice, no file where a folder is needed. ``.`` parts are dropped (``tar -C dir .``
  writes ``./bot.py``).
- **Kinds.** Regular files and folders only: no symbolic or hard links, devices, FIFOs,
  sockets, sparse or contiguous files; no set-user-id or set-group-id bit; no encrypted
  zip entry; zip entries stored or deflated only.
- **Modes.** Normalised: folders 0555, files 0444, or 0555 for a file with any
  executable bit in the archive. Owners are this process's, never the archive's.
- **The author's own files.** None of what ``referee.sandbox.private_files`` calls
  private: a private key, a match log (by its first line, whatever its name), a token
  file, a bot's output, a tournament's file, a state folder. The refusal names the file:
  the author sent what was never meant to leave their machine.

Unpacking goes into a fresh private folder beside the destination, which is renamed to
``<root>/<archive's SHA-256>`` only when everything passed (manifest included): a folder
under that name is always complete, content-addressed, and never written again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO

from referee.ladder.errors import ArchiveError, ManifestError
from referee.ladder.manifest import FILE_NAME, MAX_MANIFEST_BYTES, Manifest, check_files
from referee.ladder.manifest import parse_manifest as _parse_manifest
from referee.sandbox.private_files import private_reason
from referee.text import printable

TAR_GZ = "tar.gz"
ZIP = "zip"
_CHUNK = 64 * 1024
_TAR_HEADER_ALLOWANCE = 8 * 1024
"""Bytes of tar headers and padding allowed per entry on top of the contents."""


@dataclasses.dataclass(frozen=True, slots=True)
class ArchiveLimits:
    max_archive_bytes: int = 64 * 1024 * 1024
    max_unpacked_bytes: int = 256 * 1024 * 1024
    max_files: int = 10_000
    max_depth: int = 32
    max_path_bytes: int = 1024


@dataclasses.dataclass(frozen=True, slots=True)
class UnpackedArchive:
    sha256: str
    format: str
    archive_bytes: int
    unpacked_bytes: int
    """The contents' bytes, as counted while writing them."""
    files: int
    """Entries: files and folders."""
    folder: Path
    """``<root>/<sha256>``, read-only."""
    manifest: Manifest


def archive_digest(path: Path, limits: ArchiveLimits) -> tuple[str, int, str]:
    """The archive's (SHA-256, size, format), refusing what is no archive or too big."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ArchiveError(f"cannot read the archive: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ArchiveError("the archive is not a regular file")
        digest = hashlib.sha256()
        size = 0
        head = b""
        while chunk := f.read(_CHUNK):
            if not head:
                head = chunk[:4]
            size += len(chunk)
            if size > limits.max_archive_bytes:
                raise ArchiveError(f"the archive is over {limits.max_archive_bytes} bytes")
            digest.update(chunk)
    if head.startswith(b"\x1f\x8b"):
        kind = TAR_GZ
    elif head in (b"PK\x03\x04", b"PK\x05\x06"):
        kind = ZIP
    else:
        raise ArchiveError("not a .tar.gz or .zip archive")
    return digest.hexdigest(), size, kind


def unpack(path: Path, root: Path, limits: ArchiveLimits = ArchiveLimits()) -> UnpackedArchive:
    """Check and unpack the archive at ``path`` into ``root/<its SHA-256>``; ArchiveError
    (or ManifestError) saying what is wrong, with nothing left behind."""
    sha, size, kind = archive_digest(path, limits)
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=root))  # mode 0700
    try:
        writer = _Writer(work, limits)
        with open(path, "rb") as f:
            if kind == TAR_GZ:
                _unpack_tar(f, writer, limits)
            else:
                _unpack_zip(f, writer, limits)
        manifest = _read_manifest(work, writer)
        check_files_with_modes(manifest, work, writer)
        _refuse_private(work, writer)
        writer.seal()
        final = root / sha
        try:
            os.rename(work, final)
        except OSError:
            if not final.is_dir():
                raise
            remove_tree(work)  # the same archive, unpacked at the same time: keep that one
        return UnpackedArchive(sha, kind, size, writer.total, writer.entries, final, manifest)
    except BaseException:
        remove_tree(work)
        raise


def remove_tree(folder: Path) -> None:
    """Remove an unpacked folder (read-only by design: made writable first)."""
    if not folder.exists():
        return
    for dirpath, _dirs, _files in os.walk(folder):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o700)
    shutil.rmtree(folder, ignore_errors=True)


class _Writer:
    """Writes the entries of one archive into a private folder, counting everything."""

    def __init__(self, work: Path, limits: ArchiveLimits) -> None:
        self.work = work
        self.limits = limits
        self.total = 0
        self.entries = 0
        self.dirs: set[PurePosixPath] = {PurePosixPath()}
        self.files: dict[PurePosixPath, bool] = {}
        """Each file and whether it is executable."""

    def _count_entry(self) -> None:
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise ArchiveError(f"the archive has over {self.limits.max_files} entries")

    def _parents(self, rel: PurePosixPath) -> None:
        for parent in reversed(rel.parents):
            if parent in self.dirs:
                continue
            if parent in self.files:
                raise ArchiveError(f"{printable(str(parent))!r} is both a file and a folder")
            self._count_entry()
            os.mkdir(self.work / parent, 0o700)
            self.dirs.add(parent)

    def directory(self, name: str) -> None:
        rel = safe_name(name, self.limits)
        if rel in self.dirs:
            return  # a folder may be named twice (tar -r, or a parent given again)
        if rel in self.files:
            raise ArchiveError(f"{printable(str(rel))!r} is both a file and a folder")
        self._parents(rel)
        self._count_entry()
        os.mkdir(self.work / rel, 0o700)
        self.dirs.add(rel)

    def file(self, name: str, data: IO[bytes], executable: bool) -> None:
        rel = safe_name(name, self.limits)
        if rel == PurePosixPath():
            raise ArchiveError("a file entry without a name")
        if rel in self.files or rel in self.dirs:
            raise ArchiveError(f"{printable(str(rel))!r} is in the archive twice")
        self._parents(rel)
        self._count_entry()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.work / rel, flags, 0o600)
        self.files[rel] = executable
        with os.fdopen(fd, "wb") as out:
            while chunk := data.read(_CHUNK):
                self.total += len(chunk)
                if self.total > self.limits.max_unpacked_bytes:
                    raise ArchiveError(
                        f"the archive unpacks to over {self.limits.max_unpacked_bytes} bytes"
                    )
                out.write(chunk)

    def seal(self) -> None:
        """Normalise every mode and make the tree read-only, deepest first."""
        for rel, executable in self.files.items():
            os.chmod(self.work / rel, 0o555 if executable else 0o444)
        for rel in sorted(self.dirs, key=lambda p: len(p.parts), reverse=True):
            os.chmod(self.work / rel, 0o555)


def safe_name(name: str, limits: ArchiveLimits) -> PurePosixPath:
    """An entry's name as a relative path, or ArchiveError saying what is wrong with it.

    >>> safe_name("./bot/main.py", ArchiveLimits())
    PurePosixPath('bot/main.py')
    >>> safe_name("bot/../../etc/passwd", ArchiveLimits())
    Traceback (most recent call last):
    ...
    referee.ladder.errors.ArchiveError: 'bot/../../etc/passwd': a name with '..'
    """
    shown = printable(name[:200])
    if any(unicodedata.category(ch) == "Cc" for ch in name) or "\\" in name:
        raise ArchiveError(f"{shown!r}: a name with a control character or a backslash")
    if len(name.encode("utf-8", "surrogateescape")) > limits.max_path_bytes:
        raise ArchiveError(f"{shown!r}: a name over {limits.max_path_bytes} bytes")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"{shown!r}: an absolute name")
    parts = name.removesuffix("/").split("/")
    if name in ("", "/") or "" in parts:
        raise ArchiveError(f"{shown!r}: a name with an empty part")
    if ".." in parts:
        raise ArchiveError(f"{shown!r}: a name with '..'")
    kept = [p for p in parts if p != "."]
    if len(kept) > limits.max_depth:
        raise ArchiveError(f"{shown!r}: more than {limits.max_depth} folders deep")
    return PurePosixPath(*kept)


class _Capped(io.RawIOBase):
    """A read-only stream that refuses to yield more than ``limit`` bytes in all."""

    def __init__(self, raw: io.BufferedIOBase, limit: int) -> None:
        super().__init__()
        self.raw = raw
        self.limit = limit
        self.count = 0

    def read(self, n: int = -1, /) -> bytes:
        room = self.limit - self.count + 1
        data = self.raw.read(room if n < 0 else min(n, room))
        self.count += len(data)
        if self.count > self.limit:
            raise ArchiveError(f"the archive unpacks to over {self.limit} bytes")
        return data

    def readable(self) -> bool:
        return True


def _unpack_tar(f: BinaryIO, writer: _Writer, limits: ArchiveLimits) -> None:
    cap = limits.max_unpacked_bytes + (limits.max_files + 2) * _TAR_HEADER_ALLOWANCE
    try:
        with (
            gzip.GzipFile(fileobj=f, mode="rb") as gz,
            tarfile.open(mode="r|", fileobj=_Capped(gz, cap)) as tar,
        ):
            for member in tar:
                _tar_member(tar, member, writer)
    except (tarfile.TarError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ArchiveError(f"a broken .tar.gz: {printable(str(exc))}") from None


def _tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, writer: _Writer) -> None:
    shown = printable(member.name[:200])
    if member.mode & (stat.S_ISUID | stat.S_ISGID):
        raise ArchiveError(f"{shown!r} has a set-user-id or set-group-id bit")
    if member.type == tarfile.DIRTYPE:
        writer.directory(member.name)
    elif member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
        data = tar.extractfile(member)
        if data is None:  # pragma: no cover - a regular member always has a reader
            raise ArchiveError(f"{shown!r} cannot be read")
        writer.file(member.name, data, bool(member.mode & 0o111))
    else:
        kinds = {
            tarfile.SYMTYPE: "a symbolic link",
            tarfile.LNKTYPE: "a hard link",
            tarfile.CHRTYPE: "a character device",
            tarfile.BLKTYPE: "a block device",
            tarfile.FIFOTYPE: "a FIFO",
            tarfile.CONTTYPE: "a contiguous file",
            tarfile.GNUTYPE_SPARSE: "a sparse file",
        }
        kind = kinds.get(member.type, f"an entry of type {member.type!r}")
        raise ArchiveError(f"{shown!r} is {kind}: only files and folders are allowed")


_ZIP_METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}


def _unpack_zip(f: BinaryIO, writer: _Writer, limits: ArchiveLimits) -> None:
    try:
        with zipfile.ZipFile(f) as zf:
            infos = zf.infolist()
            if len(infos) > limits.max_files:
                raise ArchiveError(f"the archive has over {limits.max_files} entries")
            if sum(i.file_size for i in infos) > limits.max_unpacked_bytes:
                raise ArchiveError(
                    f"the archive says it unpacks to over {limits.max_unpacked_bytes} bytes"
                )
            for info in infos:
                _zip_member(zf, info, writer)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as exc:
        raise ArchiveError(f"a broken .zip: {printable(str(exc))}") from None
    except NotImplementedError as exc:  # zipfile's unsupported features
        raise ArchiveError(f"a .zip this ladder cannot read: {printable(str(exc))}") from None


def _zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, writer: _Writer) -> None:
    shown = printable(info.filename[:200])
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{shown!r} is encrypted")
    if info.compress_type not in _ZIP_METHODS:
        raise ArchiveError(
            f"{shown!r} is compressed with method {info.compress_type}: "
            "only stored or deflated entries are allowed"
        )
    mode = info.external_attr >> 16 if info.create_system == 3 else 0
    kind = stat.S_IFMT(mode)
    if mode & (stat.S_ISUID | stat.S_ISGID):
        raise ArchiveError(f"{shown!r} has a set-user-id or set-group-id bit")
    if info.is_dir() or kind == stat.S_IFDIR:
        if info.file_size:
            raise ArchiveError(f"{shown!r} is a folder with contents")
        writer.directory(info.filename)
    elif kind in (0, stat.S_IFREG):
        with zf.open(info) as data:
            writer.file(info.filename, data, bool(mode & 0o111))
    else:
        what = "a symbolic link" if kind == stat.S_IFLNK else "a device, FIFO or socket"
        raise ArchiveError(f"{shown!r} is {what}: only files and folders are allowed")


def _read_manifest(work: Path, writer: _Writer) -> Manifest:
    rel = PurePosixPath(FILE_NAME)
    if rel not in writer.files:
        nested = sorted(str(p.parent) for p in writer.files if p.name == FILE_NAME)
        hint = (
            f" (there is one in {printable(nested[0])}/: make the archive from inside that folder)"
            if nested
            else ""
        )
        raise ManifestError(f"no {FILE_NAME} at the archive's root{hint}")
    if (work / rel).stat().st_size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{FILE_NAME} is over {MAX_MANIFEST_BYTES} bytes")
    return _parse_manifest((work / rel).read_bytes())


def _refuse_private(work: Path, writer: _Writer) -> None:
    """ArchiveError naming the first file (or folder) that is its author's own: a
    private key, a match log, a token file... (``referee.sandbox.private_files``, the
    rule ``referee ladder submit`` packs by and the jail hides by)."""
    for rel in sorted(writer.files):
        why = private_reason(work / rel)
        if why is not None:
            raise ArchiveError(_private_message(rel, why))
    for rel in sorted(writer.dirs):
        why = private_reason(work / rel) if rel.parts else None
        if why is not None:
            raise ArchiveError(_private_message(rel, why))


def _private_message(rel: PurePosixPath, why: str) -> str:
    return (
        f"{printable(str(rel)[:200])!r} is {why}: a submission carries only the bot, never "
        "its author's keys, tokens or match logs (referee ladder submit leaves them out)"
    )


def check_files_with_modes(manifest: Manifest, work: Path, writer: _Writer) -> None:
    """``manifest.check_files`` on the unpacked tree, with each file's mode as it will
    be once sealed (the files are still 0600 while unpacking)."""
    for rel, executable in writer.files.items():
        os.chmod(work / rel, 0o700 if executable else 0o600)
    check_files(manifest, work)
