"""Signed logs: the referee's Ed25519 key and the trailer line that closes a log.

The hash chain proves that no line of a log was changed after the next one was written,
but anyone can recompute a chain. The trailer binds the chain's end to the referee's key:
when a log is closed (the match ended or was cancelled), the referee appends one last
line, ``{"trailer":{...}}``, holding a ``LogTrailer`` whose signature covers the bytes

    pusoy-referee-log-v1\\n<match_id>\\n<lines>\\n<final_hash>

where ``lines`` is the number of entry lines (decimal) and ``final_hash`` the SHA-256
(lower-case hex) of the last entry line. The trailer is outside the chain: no entry
refers to it. A log without one was cut short before it was closed; a rewritten log,
however well re-chained, has another final hash and its signature no longer holds.

The private key lives in the referee's state folder (``--state-dir``, never the log
folder, so publishing logs never publishes the key) or in ``--signing-key``.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from google.protobuf import json_format

from referee.files import create_private_file
from referee.log.writer import line_hash
from referee.protocol import common

ALGORITHM = "ed25519"
CONTEXT = "pusoy-referee-log-v1"
TRAILER_KEY = "trailer"
_TRAILER_PREFIX = '{"trailer":'
KEY_FILE = "signing-key.pem"


class SigningKeyError(ValueError):
    """A signing key or public key file that cannot be used; the message says why."""


def signed_bytes(match_id: str, lines: int, final_hash: str) -> bytes:
    """The exact bytes a log's signature covers."""
    return f"{CONTEXT}\n{match_id}\n{lines}\n{final_hash}".encode()


def public_key_text(raw: bytes) -> str:
    """A raw 32-byte public key as printed, served and written in trailers: base64."""
    return base64.b64encode(raw).decode("ascii")


class LogSigner:
    """Signs closed logs with one Ed25519 key."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        """The raw 32-byte public key."""

    @property
    def public_key_text(self) -> str:
        return public_key_text(self.public_key)

    @classmethod
    def ephemeral(cls) -> LogSigner:
        """A fresh key held in memory only (an embedded referee that keeps no state)."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def load(cls, path: Path) -> LogSigner:
        """A private key from a PEM file (PKCS#8, unencrypted), as ``create`` writes."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise SigningKeyError(f"cannot read the signing key {path}: {exc.strerror}") from None
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise SigningKeyError(f"{path} is not an unencrypted PEM private key ({exc})") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
        return cls(key)

    @classmethod
    def load_or_create(cls, path: Path) -> tuple[LogSigner, bool]:
        """The key at ``path``, created (mode 0600) when absent; True when created."""
        path = Path(path)
        if path.exists():
            return cls.load(path), False
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            if not create_private_file(path, pem):
                return cls.load(path), False
        except OSError as exc:
            raise SigningKeyError(f"cannot create the signing key {path}: {exc.strerror}") from None
        return cls(key), True

    def trailer(self, match_id: str, lines: int, final_hash: str) -> common.LogTrailer:
        signature = self._key.sign(signed_bytes(match_id, lines, final_hash))
        return common.LogTrailer(
            match_id=match_id,
            lines=lines,
            final_hash=final_hash,
            algorithm=ALGORITHM,
            public_key=self.public_key_text,
            signature=base64.b64encode(signature).decode("ascii"),
        )


def trailer_line(trailer: common.LogTrailer) -> str:
    """The trailer as a log line: compact JSON, proto field names, no newline."""
    body = json_format.MessageToDict(trailer, preserving_proto_field_name=True)
    return json.dumps({TRAILER_KEY: body}, separators=(",", ":"), ensure_ascii=False)


def looks_like_trailer(raw: str) -> bool:
    """Whether a log line is meant as a trailer (entries start with ``{"match_id"``)."""
    return raw.startswith(_TRAILER_PREFIX)


def load_public_key(path: Path) -> bytes:
    """A public key file: the base64 text ``referee serve`` prints and serves, or PEM."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"cannot read the public key {path}: {exc.strerror}") from None
    if b"-----BEGIN" in data:
        try:
            key = serialization.load_pem_public_key(data)
        except ValueError as exc:
            raise SigningKeyError(f"{path} is not a PEM public key ({exc})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise SigningKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    raw = decode_public_key(data)
    if raw is None:
        raise SigningKeyError(
            f"{path} holds no Ed25519 public key (expected base64 of 32 bytes, or PEM)"
        )
    return raw


def decode_public_key(text: str | bytes) -> bytes | None:
    """The raw key from its base64 text (as serve prints it and GetServerInfo serves
    it); None when it is not base64 of 32 bytes."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def public_key_argument(text: str) -> bytes:
    """``--public-key``: a file holding the key (base64 or PEM), or the base64 text itself."""
    path = Path(text)
    if not path.exists():
        raw = decode_public_key(text)
        if raw is not None:
            return raw
    return load_public_key(path)


def check_trailer(
    trailer: common.LogTrailer,
    *,
    match_id: str,
    lines: int,
    final_hash: str,
    trusted_key: bytes | None,
) -> str | None:
    """Why the trailer does not sign this log (None: it does).

    With ``trusted_key`` the signature must be by that key; without, by the key the
    trailer names (which proves the log is whole, not who wrote it).
    """
    if trailer.algorithm != ALGORITHM:
        return f"unknown signature algorithm {trailer.algorithm[:40]!r}"
    if trailer.match_id != match_id:
        return "the trailer names another match"
    if trailer.lines != lines:
        return f"the trailer signs {trailer.lines} lines, the log has {lines}"
    if trailer.final_hash != final_hash:
        return "the trailer's final hash is not the SHA-256 of the last entry line"
    try:
        named = base64.b64decode(trailer.public_key, validate=True)
        signature = base64.b64decode(trailer.signature, validate=True)
    except (binascii.Error, ValueError):
        return "the trailer's key or signature is not base64"
    if trusted_key is not None and named != trusted_key:
        return "the log is signed by another key than the one given"
    try:
        public = Ed25519PublicKey.from_public_bytes(named)
        public.verify(signature, signed_bytes(match_id, lines, final_hash))
    except (InvalidSignature, ValueError):
        return "the signature does not match (the log was changed after it was signed)"
    return None


def resign(data: bytes, match_id: str, signer: LogSigner) -> tuple[bytes, str]:
    """The log ``data`` with its trailer (if any) replaced by one of ``signer``, and the
    final hash signed: a tournament signs with its own key the logs its Ray workers made
    (each worker's referee signs with a key of its own that nobody publishes)."""
    lines = data.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and looks_like_trailer(lines[-1]):
        lines.pop()
    if not lines:
        raise ValueError("a log with no entry cannot be signed")
    final_hash = line_hash(lines[-1])
    trailer = trailer_line(signer.trailer(match_id, len(lines), final_hash))
    return ("\n".join([*lines, trailer]) + "\n").encode("utf-8"), final_hash
