"""Uploaded archives, as an attacker would make them: every malicious archive is built
here, byte for byte, and must be refused with its reason and nothing left on disk."""

from __future__ import annotations

import gzip
import io
import stat
import struct
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from referee.ladder.archive import ArchiveLimits, unpack
from referee.ladder.errors import ArchiveError, ManifestError

MANIFEST = b'runtime = "python"\ncommand = ["bot.py", "--hello"]\n'
BOT = b"import sys\nprint('hello from', sys.argv[1:])\n"
SMALL = ArchiveLimits(
    max_archive_bytes=256 * 1024,
    max_unpacked_bytes=1024 * 1024,
    max_files=20,
    max_depth=4,
    max_path_bytes=100,
)


def tar_gz(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A .tar.gz of exactly these members (headers as given, however hostile)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    path.write_bytes(gzip.compress(raw.getvalue(), compresslevel=1))
    return path


def member(
    name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, mode: int = 0o644
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = int(time.time())
    return info, data


def good_members() -> list[tuple[tarfile.TarInfo, bytes]]:
    return [
        member("bot.toml", MANIFEST),
        member("bot.py", BOT),
        member("lib/", kind=tarfile.DIRTYPE, mode=0o777),
        member("lib/util.py", b"X = 1\n", mode=0o666),
    ]


def zip_file(
    path: Path, entries: list[tuple[str, bytes, int]], method: int = zipfile.ZIP_DEFLATED
) -> Path:
    """A .zip of (name, data, unix mode) entries; mode 0 leaves the attributes empty."""
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = method
            if mode:
                info.create_system = 3
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def refused(archive: Path, root: Path, why: str, limits: ArchiveLimits = SMALL) -> None:
    with pytest.raises(ArchiveError, match=why):
        unpack(archive, root, limits)
    if root.exists():
        assert list(root.iterdir()) == []  # nothing left behind, not even a work folder


# -- what must work ---------------------------------------------------------------------


def test_a_tar_gz_unpacks_read_only_content_addressed_and_runs(tmp_path):
    archive = tar_gz(
        tmp_path / "bot.tar.gz", [*good_members(), member("run.sh", b"#!/bin/sh\n", mode=0o775)]
    )
    root = tmp_path / "versions"
    got = unpack(archive, root, SMALL)
    assert got.folder == root / got.sha256 and got.format == "tar.gz"
    assert (got.files, got.unpacked_bytes) == (5, len(MANIFEST) + len(BOT) + 6 + 10)
    modes = {
        p.relative_to(got.folder).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in got.folder.rglob("*")
    }
    assert modes == {
        "bot.toml": 0o444,
        "bot.py": 0o444,
        "lib": 0o555,
        "lib/util.py": 0o444,
        "run.sh": 0o555,
    }
    assert stat.S_IMODE(got.folder.stat().st_mode) == 0o555
    assert got.manifest.command == ("bot.py", "--hello")
    out = subprocess.run(
        got.manifest.argv(got.folder), cwd=got.folder, capture_output=True, text=True, timeout=60
    )
    assert out.stdout == "hello from ['--hello']\n", out.stderr
    again = unpack(archive, root, SMALL)  # the same archive: the same folder, untouched
    assert again == got and sorted(p.name for p in root.iterdir()) == [got.sha256]


def test_a_zip_unpacks_and_a_native_program_keeps_its_executable_bit(tmp_path):
    manifest = b'runtime = "native"\ncommand = ["bin/bot", "--fast"]\n'
    archive = zip_file(
        tmp_path / "bot.zip",
        [
            ("bot.toml", manifest, 0o100644),
            ("bin/", b"", 0o40755),
            ("bin/bot", b'#!/bin/sh\necho native "$@"\n', 0o100755),
            ("data.txt", b"x", 0),
        ],
    )
    got = unpack(archive, tmp_path / "v", SMALL)
    assert got.format == "zip" and got.files == 4
    assert stat.S_IMODE((got.folder / "bin/bot").stat().st_mode) == 0o555
    argv = got.manifest.argv(got.folder)
    assert argv == [str(got.folder / "bin/bot"), "--fast"]
    assert (
        subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout == "native --fast\n"
    )


def test_names_starting_with_dot_slash_are_kept_relative(tmp_path):
    archive = tar_gz(
        tmp_path / "a.tar.gz",
        [
            member("./", kind=tarfile.DIRTYPE),
            member("./bot.toml", MANIFEST),
            member("./bot.py", BOT),
        ],
    )
    got = unpack(archive, tmp_path / "v", SMALL)
    assert sorted(p.name for p in got.folder.iterdir()) == ["bot.py", "bot.toml"]


# -- sizes ------------------------------------------------------------------------------


def test_an_archive_over_the_size_limit_is_refused_before_it_is_opened(tmp_path):
    archive = tmp_path / "big.tar.gz"
    archive.write_bytes(b"\x1f\x8b" + bytes(SMALL.max_archive_bytes))
    refused(archive, tmp_path / "v", "over 262144 bytes")


def test_a_gzip_bomb_stops_at_the_unpacked_limit(tmp_path):
    """64 MiB of zeros in about 64 KiB: unpacking stops at 1 MiB, not at 64."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for info, data in good_members()[:2]:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        zeros = tarfile.TarInfo("zeros")
        zeros.size = 64 * 1024 * 1024
        tar.addfile(zeros, io.BytesIO(bytes(zeros.size)))
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(raw.getvalue(), compresslevel=9))
    assert archive.stat().st_size < SMALL.max_archive_bytes
    started = time.monotonic()
    refused(archive, tmp_path / "v", "unpacks to over 1048576 bytes")
    assert time.monotonic() - started < 20


def test_a_tar_header_claiming_a_huge_extended_header_cannot_make_it_read_without_bound(tmp_path):
    """A pax header block whose size says 8 GiB, then 32 MiB of zeros in a few KiB of
    gzip: tarfile would read the whole 'header' into memory; the capped stream stops it."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = 8**11 - 1  # the largest an octal field holds: 8 GiB
    block = header.tobuf(format=tarfile.USTAR_FORMAT)
    compressor = gzip.compress(block + bytes(32 * 1024 * 1024), compresslevel=9)
    archive = tmp_path / "pax.tar.gz"
    archive.write_bytes(compressor)
    refused(archive, tmp_path / "v", "unpacks to over 1228800 bytes")


def test_a_zip_bomb_is_refused_from_its_directory_before_decompressing(tmp_path):
    archive = zip_file(
        tmp_path / "bomb.zip",
        [("bot.toml", MANIFEST, 0), *((f"z{i}", bytes(600_000), 0) for i in range(4))],
    )
    assert archive.stat().st_size < 50_000
    refused(archive, tmp_path / "v", "says it unpacks to over")


def test_a_zip_whose_headers_understate_the_sizes_is_caught_while_decompressing(tmp_path):
    """The sizes in both headers patched down to 10 bytes, the data 4 MiB of zeros: the
    declared total passes, decompression stops at the declared size, and the entry's
    checksum then fails (never 4 MiB written)."""
    archive = zip_file(
        tmp_path / "liar.zip", [("bot.toml", MANIFEST, 0), ("zeros", bytes(4 * 1024 * 1024), 0)]
    )
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo("zeros")
    struct.pack_into("<I", data, info.header_offset + 22, 10)  # local header: uncompressed size
    at = data.find(b"PK\x01\x02")
    while data[at + 46 : at + 46 + 5] != b"zeros":
        at = data.find(b"PK\x01\x02", at + 4)
    struct.pack_into("<I", data, at + 24, 10)  # its central directory entry: the same
    archive.write_bytes(bytes(data))
    refused(archive, tmp_path / "v", "broken .zip: Bad CRC-32")


def test_the_unpacked_size_is_counted_not_declared(tmp_path):
    """A tar's members are honest one by one; together they are over the limit."""
    members = [member("bot.toml", MANIFEST), *(member(f"f{i}", bytes(300_000)) for i in range(4))]
    refused(tar_gz(tmp_path / "many.tar.gz", members), tmp_path / "v", "unpacks to over 1048576")


def test_too_many_entries_are_refused(tmp_path):
    refused(
        tar_gz(tmp_path / "n.tar.gz", [member(f"f{i}") for i in range(25)]),
        tmp_path / "v",
        "over 20 entries",
    )
    refused(
        zip_file(tmp_path / "n.zip", [(f"f{i}", b"", 0) for i in range(25)]),
        tmp_path / "w",
        "over 20 entries",
    )
    deep = "/".join("d" * 3 for _ in range(10))
    refused(tar_gz(tmp_path / "d.tar.gz", [member(f"{deep}/f")]), tmp_path / "x", "folders deep")


# -- names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("/etc/cron.d/evil", "absolute"),
        ("../escape.py", r"'\.\.'"),
        ("lib/../../escape.py", r"'\.\.'"),
        ("lib//x.py", "empty part"),
        ("lib\\..\\escape.py", "backslash"),
        ("C:/x.py", "absolute"),
        ("bad\x1b[2Jname", "control character"),
        ("x" * 101, "over 100 bytes"),
    ],
)
def test_escaping_or_strange_names_are_refused(tmp_path, name, why):
    refused(
        tar_gz(tmp_path / "n.tar.gz", [*good_members(), member(name, b"x")]), tmp_path / "v", why
    )
    if "\x1b" not in name:
        refused(
            zip_file(tmp_path / "n.zip", [("bot.toml", MANIFEST, 0), (name, b"x", 0)]),
            tmp_path / "w",
            why,
        )
    assert not (tmp_path / "escape.py").exists()


def test_a_name_twice_or_a_file_as_a_folder_is_refused(tmp_path):
    refused(
        tar_gz(tmp_path / "a.tar.gz", [*good_members(), member("bot.py", b"evil")]),
        tmp_path / "v",
        "twice",
    )
    refused(
        tar_gz(tmp_path / "b.tar.gz", [*good_members(), member("bot.py/x", b"")]),
        tmp_path / "v",
        "both a file and a folder",
    )
    refused(
        tar_gz(tmp_path / "c.tar.gz", [member("x/y", b""), member("x", b"")]),
        tmp_path / "v",
        "twice",
    )


# -- kinds and modes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        (tarfile.SYMTYPE, "symbolic link"),
        (tarfile.LNKTYPE, "hard link"),
        (tarfile.CHRTYPE, "character device"),
        (tarfile.BLKTYPE, "block device"),
        (tarfile.FIFOTYPE, "FIFO"),
        (tarfile.CONTTYPE, "contiguous"),
    ],
)
def test_links_devices_and_fifos_in_a_tar_are_refused(tmp_path, kind, why):
    info, _ = member("evil", kind=kind)
    info.linkname = "/etc/shadow" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
    info.devmajor, info.devminor = 1, 3
    refused(tar_gz(tmp_path / "k.tar.gz", [*good_members(), (info, b"")]), tmp_path / "v", why)


def test_a_symlink_in_a_zip_is_refused(tmp_path):
    archive = zip_file(
        tmp_path / "l.zip", [("bot.toml", MANIFEST, 0o100644), ("bot.py", b"/etc/passwd", 0o120777)]
    )
    refused(archive, tmp_path / "v", "symbolic link")
    fifo = zip_file(tmp_path / "f.zip", [("bot.toml", MANIFEST, 0o100644), ("p", b"", 0o010644)])
    refused(fifo, tmp_path / "w", "device, FIFO or socket")


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6777])
def test_set_id_bits_are_refused(tmp_path, mode):
    refused(
        tar_gz(tmp_path / "s.tar.gz", [*good_members(), member("suid", b"x", mode=mode)]),
        tmp_path / "v",
        "set-user-id or set-group-id",
    )
    refused(
        zip_file(tmp_path / "s.zip", [("bot.toml", MANIFEST, 0), ("suid", b"x", 0o100000 | mode)]),
        tmp_path / "w",
        "set-user-id",
    )


def test_encrypted_or_exotic_zip_entries_are_refused(tmp_path):
    archive = zip_file(tmp_path / "b.zip", [("bot.toml", MANIFEST, 0)], method=zipfile.ZIP_BZIP2)
    refused(archive, tmp_path / "v", "method 12")
    plain = zip_file(tmp_path / "e.zip", [("bot.toml", MANIFEST, 0)], method=zipfile.ZIP_STORED)
    data = bytearray(plain.read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        struct.pack_into("<H", data, at + flags_at, 0x1)  # "encrypted"
    plain.write_bytes(bytes(data))
    refused(plain, tmp_path / "w", "encrypted")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"just text", "not a .tar.gz or .zip"),
        (b"\x1f\x8bnot gzip at all", "broken .tar.gz"),
        (b"PK\x03\x04garbage", "broken .zip"),
    ],
)
def test_what_is_no_archive_is_refused(tmp_path, data, why):
    path = tmp_path / "x.tar.gz"
    path.write_bytes(data)
    refused(path, tmp_path / "v", why)


def test_a_link_as_the_upload_itself_is_refused(tmp_path):
    real = tar_gz(tmp_path / "real.tar.gz", good_members())
    link = tmp_path / "link.tar.gz"
    link.symlink_to(real)
    refused(link, tmp_path / "v", "cannot read")


# -- the manifest -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        (b'runtime = "python"\ncommand = "python bot.py; rm -rf /"\n', "never a shell string"),
        (
            b'runtime = "cobol"\ncommand = ["bot.py"]\n',
            "runtime must be one of python, node, java, native",
        ),
        (b'runtime = "python"\ncommand = ["bot.py"]\ninstall = "pip install x"\n', "unknown key"),
        (b'runtime = "python"\ncommand = []\n', "list of 1 to 64"),
        (b'runtime = "python"\ncommand = ["missing.py"]\n', "not a file of the archive"),
        (b'runtime = "python"\ncommand = ["../../bin/sh"]\n', "inside the archive"),
        (b'runtime = "native"\ncommand = ["bot.py"]\n', "no executable bit"),
        (b'runtime = "builtin"\ncommand = ["greedy"]\n', "runtime must be"),
        (b"runtime = [\n", "not TOML"),
        (
            b'runtime = "python"\ncommand = ["bot.py"]\ndescription = "' + b"x" * 20_000 + b'"\n',
            "over 16384 bytes",
        ),
    ],
)
def test_a_wrong_manifest_says_which_key(tmp_path, manifest, why):
    archive = tar_gz(tmp_path / "m.tar.gz", [member("bot.toml", manifest), member("bot.py", BOT)])
    with pytest.raises(ManifestError, match=why):
        unpack(archive, tmp_path / "v", SMALL)
    assert list((tmp_path / "v").iterdir()) == []


def test_a_manifest_one_folder_down_gets_a_hint(tmp_path):
    archive = tar_gz(
        tmp_path / "m.tar.gz", [member("mybot/bot.toml", MANIFEST), member("mybot/bot.py", BOT)]
    )
    with pytest.raises(ManifestError, match="there is one in mybot/: make the archive from inside"):
        unpack(archive, tmp_path / "v", SMALL)


# -- the author's own files (issue 30) --------------------------------------------------

LOG = (Path(__file__).parents[1] / "fixtures/logs/v2/20261218-100000-daa76697.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ([member(".referee/signing-key.pem", b"-----BEGIN PRIVATE KEY-----\n")], "a private key"),
        ([member("id_ed25519.key", b"secret")], "a private key"),
        ([member("matches/20261218-100000-daa76697.jsonl", LOG)], "a match log"),
        ([member("notes.json", LOG)], "a match log"),  # renamed: known by its first line
        ([member("seats/alice.token", b"tok")], "a token file"),
        ([member("out/seat-0.stderr", b"Traceback")], "a bot's output"),
        ([member(".referee/", kind=tarfile.DIRTYPE)], "a state folder"),
    ],
)
def test_an_archive_holding_its_authors_own_files_is_refused_naming_one(tmp_path, extra, why):
    """A key, a token, a match log (by content, whatever its name), a bot's output or a
    state folder never reach the ladder: the refusal names the file."""
    archive = tar_gz(tmp_path / "bot.tar.gz", [*good_members(), *extra])
    name = extra[0][0].name.rstrip("/")
    refused(archive, tmp_path / "versions", f"{name!r} is {why}")


def test_a_log_like_name_that_is_no_log_is_kept(tmp_path):
    weights = member("weights.json", b'{"layers": [1, 2, 3]}')
    got = unpack(tar_gz(tmp_path / "bot.tar.gz", [*good_members(), weights]), tmp_path / "v", SMALL)
    assert (got.folder / "weights.json").is_file()
