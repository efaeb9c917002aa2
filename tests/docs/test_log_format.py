"""docs/log-format.md is enough to check a log without the proto or the code: a verifier
written from the page alone, in Node.js with its standard library (log_verify.mjs), accepts
the fixture logs and refuses tampered copies, as ``referee verify`` does; the page's field
reference is the proto's, and its trailer example is a real log's."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from referee.log.signing import LogSigner, decode_public_key, resign
from referee.log.verify import verify_log
from referee.protocol import common

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "log-format.md"
VERIFIER = Path(__file__).with_name("log_verify.mjs")
V1 = sorted((ROOT / "tests" / "fixtures" / "logs" / "v1").glob("*.jsonl"))
V2_DIR = ROOT / "tests" / "fixtures" / "logs" / "v2"
V2 = sorted(V2_DIR.glob("*.jsonl"))
KEY_TEXT = (V2_DIR / "signing-key.pub").read_text().strip()


def node_verify(*args: str | Path) -> dict[str, str]:
    """Each log's verdict line from log_verify.mjs, by the log's path."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "Node.js ('node') is not on PATH: this test runs tests/docs/log_verify.mjs, a "
            "verifier written from docs/log-format.md. Install Node.js 18 or later "
            "(e.g. apt-get install nodejs) and run again."
        )
    done = subprocess.run(
        [node, str(VERIFIER), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    verdicts = {}
    for line in done.stdout.splitlines():
        path = line.split(": ", 2)[1]
        verdicts[path] = line
    ok = all(v.startswith("OK: ") for v in verdicts.values())
    assert done.returncode == (0 if ok else 1), done.stdout
    return verdicts


def test_the_independent_verifier_accepts_every_fixture_log():
    signed = node_verify("--public-key", KEY_TEXT, *V2)
    assert [signed[str(p)] for p in V2] == [
        f"OK: {p}: {len(p.read_bytes().splitlines()) - 1} entries, signed by {KEY_TEXT}" for p in V2
    ]
    unsigned = node_verify(*V1)  # schema 1, written before logs were signed
    assert all(unsigned[str(p)].endswith(" entries, unsigned") for p in V1)
    assert all(v.startswith("OK: ") for v in unsigned.values())


# -- tampered copies ---------------------------------------------------------------------


def _split(data: bytes) -> tuple[list[bytes], bytes]:
    *entries, trailer = data.rstrip(b"\n").split(b"\n")
    return entries, trailer


def _join(entries: list[bytes], trailer: bytes | None) -> bytes:
    return b"\n".join([*entries, *([trailer] if trailer is not None else [])]) + b"\n"


def _rechain(entries: list[bytes], start: int) -> list[bytes]:
    """Renumber and re-link the entries from ``start`` on, as a forger would."""
    out = list(entries[:start])
    for i in range(start, len(entries)):
        entry = json.loads(entries[i])
        entry["seq"] = str(i + 1)
        if i:
            entry["prev_hash"] = hashlib.sha256(out[i - 1]).hexdigest()
        out.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode())
    return out


def _played(entries: list[bytes]) -> int:
    """A line in the middle of the log that plays a card."""
    return next(i for i, e in enumerate(entries) if i > 20 and b'"played":' in e)


def _other_card(line: bytes) -> bytes:
    card = json.loads(line)["event"]["played"]["play"]["cards"][0]
    other = ("4" if card[0] != "4" else "5") + card[1]
    return line.replace(f'"cards":["{card}"'.encode(), f'"cards":["{other}"'.encode(), 1)


def changed_card(data: bytes) -> bytes:
    entries, trailer = _split(data)
    i = _played(entries)
    entries[i] = _other_card(entries[i])
    return _join(entries, trailer)


def changed_card_rechained(data: bytes) -> bytes:
    entries, trailer = _split(data)
    i = _played(entries)
    entries[i] = _other_card(entries[i])
    return _join(_rechain(entries, i + 1), trailer)


def removed_line(data: bytes) -> bytes:
    entries, trailer = _split(data)
    del entries[_played(entries)]
    return _join(entries, trailer)


def removed_line_rechained(data: bytes) -> bytes:
    entries, trailer = _split(data)
    i = _played(entries)
    del entries[i]
    return _join(_rechain(entries, i), trailer)


def resigned_with_another_key(data: bytes) -> bytes:
    match_id = json.loads(data.split(b"\n", 1)[0])["match_id"]
    return resign(data, match_id, LogSigner.ephemeral())[0]


def truncated_trailer(data: bytes) -> bytes:
    return data[: data.rstrip(b"\n").rfind(b"\n") + 60]


def truncated_trailer_ending_its_line(data: bytes) -> bytes:
    return truncated_trailer(data) + b"\n"


def changed_signature(data: bytes) -> bytes:
    entries, trailer = _split(data)
    t = json.loads(trailer)
    sig = t["trailer"]["signature"]
    t["trailer"]["signature"] = ("B" if sig[0] != "B" else "C") + sig[1:]
    return _join(entries, json.dumps(t, separators=(",", ":")).encode())


def no_trailer(data: bytes) -> bytes:
    entries, _ = _split(data)
    return _join(entries, None)


def not_utf8(data: bytes) -> bytes:
    """A bot name as Latin-1 writes "zoë": a decoder that replaced the byte would hash
    other bytes than the file's."""
    entries, trailer = _split(data)
    entries[1] = entries[1].replace(b'"bot_name":"', b'"bot_name":"zo\xeb', 1)
    return _join(entries, trailer)


TAMPERINGS: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    # name: (how, what the independent verifier says with the published key)
    "changed_card": (changed_card, "prev_hash is not the SHA-256 of the previous line"),
    "changed_card_rechained": (changed_card_rechained, "final hash is not the SHA-256"),
    "removed_line": (removed_line, "sequence number"),
    "removed_line_rechained": (removed_line_rechained, "the trailer signs"),
    "resigned_with_another_key": (resigned_with_another_key, "signed by another key"),
    "truncated_trailer": (truncated_trailer, "cut short"),
    "truncated_trailer_ending_its_line": (truncated_trailer_ending_its_line, "not JSON"),
    "changed_signature": (changed_signature, "the signature does not match"),
    "no_trailer": (no_trailer, "no signature trailer"),
    "not_utf8": (not_utf8, "line 2: not UTF-8"),
}


def test_the_independent_verifier_refuses_tampered_copies_as_referee_verify_does(tmp_path):
    original = V2[0].read_bytes()
    copies = {}
    for name, (tamper, _) in TAMPERINGS.items():
        copies[name] = tmp_path / f"{name}.jsonl"
        copies[name].write_bytes(tamper(original))
        assert copies[name].read_bytes() != original
    verdicts = node_verify("--public-key", KEY_TEXT, *copies.values())
    key = decode_public_key(KEY_TEXT)
    for name, (_, why) in TAMPERINGS.items():
        verdict = verdicts[str(copies[name])]
        expected = "UNSIGNED: " if name == "no_trailer" else "FAILED: "
        assert verdict.startswith(expected) and why in verdict, (name, verdict)
        assert not verify_log(copies[name], public_key=key).ok, name  # the referee agrees
    assert "line 2: not UTF-8" in verify_log(copies["not_utf8"]).summary()
    # Without the published key, a trailer need only sign its own log: re-signing by
    # another key, or leaving the trailer out, is a whole log that proves nobody wrote it.
    lenient = node_verify(copies["resigned_with_another_key"], copies["no_trailer"])
    other = json.loads(copies["resigned_with_another_key"].read_text().splitlines()[-1])
    resigned = lenient[str(copies["resigned_with_another_key"])]
    assert resigned.endswith(f"signed by {other['trailer']['public_key']}")
    assert lenient[str(copies["no_trailer"])].endswith(" entries, unsigned")
    assert verify_log(copies["resigned_with_another_key"]).ok
    assert verify_log(copies["no_trailer"]).ok


# -- the page against the proto and the logs ---------------------------------------------

_SCALARS = {
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_UINT64: "uint64",
}


def _type(fd: FieldDescriptor) -> str:
    if fd.message_type is not None:
        name = fd.message_type.name
    elif fd.enum_type is not None:
        name = fd.enum_type.name
    else:
        name = _SCALARS[fd.type]  # a type the page does not name fails here
    return f"[{name}]" if fd.is_repeated else name


def _fill(head: str, items: list[str], width: int = 88) -> str:
    lines, line = [], head
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = "   "
        line += " " + piece
    return "\n".join([*lines, line])


def field_reference() -> str:
    """Section 10 as the proto says it: every message a log line can hold, then enums."""
    messages: list[Descriptor] = []
    enums: list[EnumDescriptor] = []
    todo = [common.LogEntry.DESCRIPTOR, common.LogTrailer.DESCRIPTOR]
    while todo:
        desc = todo.pop(0)
        if desc in messages or desc.full_name == "google.protobuf.Timestamp":
            continue
        messages.append(desc)
        for fd in sorted(desc.fields, key=lambda f: f.number):
            if fd.message_type is not None:
                todo.append(fd.message_type)
            if fd.enum_type is not None and fd.enum_type not in enums:
                enums.append(fd.enum_type)
    out = []
    for desc in messages:
        fields = sorted(desc.fields, key=lambda f: f.number)
        one_of = bool(desc.oneofs) and all(f.containing_oneof is not None for f in fields)
        head = f"{desc.name} (one of):" if one_of else f"{desc.name}:"
        out.append(_fill(head, [f"{f.name} {_type(f)}" for f in fields] or ["no fields"]))
    out += [_fill(f"enum {e.name}:", [v.name for v in e.values]) for e in enums]
    return "\n".join(out)


def test_the_field_reference_is_the_protos():
    page = PAGE.read_text(encoding="utf-8")
    block = page.split("## 10. Field reference", 1)[1].split("```text\n", 1)[1].split("```")[0]
    assert block == field_reference() + "\n", (
        "docs/log-format.md section 10 differs from common.proto; the proto says:\n"
        + field_reference()
    )


def test_the_pages_trailer_example_is_a_fixture_logs_and_signs_what_the_page_says():
    page = PAGE.read_text(encoding="utf-8")
    example = page.split("## 6. The trailer", 1)[1].split("```json\n", 1)[1].split("\n```")[0]
    log = next(p for p in V2 if p.read_text(encoding="utf-8").splitlines()[-1] == example)
    entries = log.read_bytes().rstrip(b"\n").split(b"\n")[:-1]
    trailer = json.loads(example)["trailer"]
    message = "\n".join(
        ["pusoy-referee-log-v1", trailer["match_id"], trailer["lines"], trailer["final_hash"]]
    ).encode()
    assert trailer["final_hash"] == hashlib.sha256(entries[-1]).hexdigest()
    assert f"the {len(message)} bytes `pusoy-referee-log-v1\\n{trailer['match_id']}\\n" in page
