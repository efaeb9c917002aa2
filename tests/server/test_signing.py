"""Signed logs: the trailer a referee writes when it closes a log, what `referee verify`
makes of it, and forgeries that a re-computed hash chain no longer hides."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.bots import GreedyBot, RandomBot, play_seat
from referee.log import read_log
from referee.log.reader import LogFormatError
from referee.log.signing import LogSigner, public_key_text, trailer_line
from referee.log.verify import verify_log
from referee.log.writer import line_hash
from referee.protocol import match_service

from .conftest import create, entry_lines, log_path, rechained

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def signed(server, organiser, tmp_path) -> tuple[Path, match_service.MatchInfo]:
    """A finished two-hand match: a copy of its log, and its MatchInfo."""
    created = await create(organiser, hands=2, seed="signed", seat_names=["a", "b", "c", "d"])
    bots = [GreedyBot(), RandomBot(1), GreedyBot(), RandomBot(2)]
    await asyncio.gather(
        *(play_seat(b, server.address, t) for b, t in zip(bots, created.seat_tokens, strict=True))
    )
    info = (
        await organiser.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))
    ).match
    copy = tmp_path / "signed.jsonl"
    copy.write_bytes(log_path(server, created.match_id).read_bytes())
    return copy, info


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


async def test_a_closed_log_ends_with_a_trailer_that_signs_its_final_hash(server, signed):
    path, info = signed
    read = read_log(path)
    assert read.trailer is not None and read.complete
    assert read.lines[-1].entry.event.HasField("match_ended")  # the trailer is no entry
    assert read.trailer.final_hash == line_hash(read.lines[-1].raw) == info.final_hash
    assert read.trailer.lines == len(read.lines) == info.log_lines
    assert read.trailer.public_key == server.signer.public_key_text
    report = verify_log(path, server.signer.public_key)
    assert report.ok and report.key_checked and report.signed_by == read.trailer.public_key
    assert report.summary().endswith(f"signed by {server.signer.public_key_text}")


def test_a_rechained_forgery_is_caught_by_the_signature(server, signed, tmp_path):
    """Bots renamed and a disconnect deleted, the chain recomputed: the rules cannot tell,
    the signature can."""
    path, _ = signed
    lines = path.read_text().splitlines()
    entries = [json.loads(line) for line in lines[:-1]]
    entries[0]["event"]["match_created"]["config"]["seat_names"] = ["w", "x", "y", "z"]
    forged_entries = rechained(entries).splitlines()
    key = server.signer.public_key
    # The rules alone accept the forgery...
    assert verify_log(write(tmp_path / "bare.jsonl", forged_entries)).ok
    # ... but the referee's trailer does not sign it,
    kept = verify_log(write(tmp_path / "kept.jsonl", [*forged_entries, lines[-1]]), key)
    assert not kept.ok and "final hash" in (kept.problem or "")
    assert kept.line == len(forged_entries) + 1
    # nor a trailer edited to the new final hash,
    trailer = json.loads(lines[-1])
    trailer["trailer"]["final_hash"] = line_hash(forged_entries[-1])
    edited = write(tmp_path / "edited.jsonl", [*forged_entries, json.dumps(trailer)])
    report = verify_log(edited, key)
    assert not report.ok and "signature does not match" in (report.problem or "")
    assert not verify_log(edited).ok  # even without a trusted key
    # and the forger's own signature is not the referee's.
    mine = LogSigner.ephemeral()
    resigned = mine.trailer(
        entries[0]["match_id"], len(forged_entries), line_hash(forged_entries[-1])
    )
    signed_by_forger = write(tmp_path / "forger.jsonl", [*forged_entries, trailer_line(resigned)])
    assert verify_log(signed_by_forger).ok  # whole, but by whom?
    report = verify_log(signed_by_forger, key)
    assert not report.ok and "another key" in (report.problem or "")


def test_a_log_without_its_trailer_is_unsigned_not_tampered(server, signed, tmp_path):
    path, _ = signed
    cut = write(tmp_path / "cut.jsonl", entry_lines(path))
    report = verify_log(cut, server.signer.public_key)
    assert not report.ok and report.unsigned and report.problem is None
    assert report.summary().startswith("UNSIGNED: ")
    assert verify_log(cut).ok and verify_log(cut).summary().endswith(", unsigned")


def test_a_trailer_anywhere_but_last_is_a_malformed_line(signed, tmp_path):
    path, _ = signed
    lines = path.read_text().splitlines()
    moved = write(tmp_path / "moved.jsonl", [*lines[:3], lines[-1], *lines[3:-1]])
    with pytest.raises(LogFormatError) as err:
        read_log(moved)
    assert err.value.line == 4
    report = verify_log(moved)
    assert not report.ok and report.line == 4 and "trailer" in (report.problem or "")
    broken = write(tmp_path / "broken.jsonl", [*lines[:-1], '{"trailer":{"lines":"x"}}'])
    assert not verify_log(broken).ok


def test_verify_public_key_on_the_command_line(server, signed, tmp_path):
    path, _ = signed
    key_file = tmp_path / "referee.pub"
    key_file.write_text(server.signer.public_key_text + "\n")
    cut = write(tmp_path / "cut.jsonl", entry_lines(path))
    other = tmp_path / "other.pub"
    other.write_text(public_key_text(LogSigner.ephemeral().public_key))

    def verify(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "referee.cli", "verify", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            check=False,
        )

    done = verify("--public-key", str(key_file), str(path), str(cut))
    assert done.returncode == 1
    ok, unsigned = done.stdout.splitlines()
    assert ok.startswith(f"OK: {path}: ") and "signed by" in ok
    assert unsigned.startswith(f"UNSIGNED: {cut}: ") and "cut short" in unsigned
    done = verify("--public-key", str(other), str(path))
    assert done.returncode == 1 and "signed by another key" in done.stdout
    done = verify("--public-key", str(tmp_path / "missing.pub"), str(path))
    assert done.returncode == 2 and "cannot read the public key" in done.stderr
    assert verify(str(path)).returncode == 0
    # The key's text itself, as serve prints it and GetServerInfo serves it (a '/' in
    # the base64 does not make it a path).
    text = server.signer.public_key_text
    done = verify("--public-key", text, str(path))
    assert done.returncode == 0 and done.stdout.startswith(f"OK: {path}: "), done.stderr
    slashed = next(
        t for t in (public_key_text(LogSigner.ephemeral().public_key) for _ in range(200))
        if "/" in t
    )  # fmt: skip
    done = verify("--public-key", slashed, str(path))
    assert done.returncode == 1 and "signed by another key" in done.stdout, done.stderr
    done = verify("--public-key", "not-a-key-nor-a-file", str(path))
    assert done.returncode == 2 and "cannot read the public key" in done.stderr


def test_the_signed_bytes_are_as_documented():
    signer = LogSigner.ephemeral()
    trailer = signer.trailer("m-1", 12, "ab" * 32)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    Ed25519PublicKey.from_public_bytes(base64.b64decode(trailer.public_key)).verify(
        base64.b64decode(trailer.signature),
        b"pusoy-referee-log-v1\nm-1\n12\n" + b"ab" * 32,
    )
    assert trailer.algorithm == "ed25519" and trailer.lines == 12
