"""A referee's state folder: its secrets, kept apart from the logs it publishes.

``.referee/`` (mode 0700) in the working directory by default holds:

    organiser-token     the organiser's credential (mode 0600), unless --organiser-token-file
    signing-key.pem     the Ed25519 key that signs logs (mode 0600), unless --signing-key
    signing-key.pub     its public key, base64 (what ``referee verify --public-key`` reads)
    serving.json        where a running ``referee serve`` listens (mode 0600), so that
                        ``referee organiser`` finds it without flags; removed at exit

A state folder equal to the log folder, or inside it, is refused: publishing the logs
would publish the key. So is a token or key file inside the log folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from referee.client.serving import SERVING_FILE, Serving, ServingError, read_serving
from referee.client.tokens import TokenError
from referee.files import replace_private_file
from referee.log.signing import KEY_FILE, LogSigner, SigningKeyError
from referee.server.auth import load_or_create_token

DEFAULT_STATE_DIR = Path(".referee")
TOKEN_FILE = "organiser-token"
PUBLIC_KEY_FILE = "signing-key.pub"


class SecretsError(ValueError):
    """The state folder, token or key cannot be used; the message says why."""


def _within(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


@dataclasses.dataclass(frozen=True)
class ServerSecrets:
    token: str
    token_file: Path
    token_created: bool
    signer: LogSigner
    key_file: Path
    key_created: bool
    public_key_file: Path | None
    """Where the public key was written (None: a key given by --signing-key elsewhere)."""


def load_signer(state_dir: Path, log_dir: Path) -> tuple[LogSigner, Path]:
    """The signing key of ``state_dir`` (folder and key created when absent), and where
    its public key is; for an embedded referee that needs no organiser token."""
    if _within(state_dir, log_dir):
        raise SecretsError(
            f"the state folder {state_dir} is the log folder {log_dir} or inside it: "
            "publishing the logs would publish the signing key. Give another --state-dir"
        )
    existed = state_dir.exists()
    try:
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not existed:
            os.chmod(state_dir, 0o700)
        signer, _ = LogSigner.load_or_create(state_dir / KEY_FILE)
        public = state_dir / PUBLIC_KEY_FILE
        public.write_text(signer.public_key_text + "\n", encoding="ascii")
    except OSError as exc:
        raise SecretsError(f"cannot use the state folder {state_dir}: {exc}") from None
    except SigningKeyError as exc:
        raise SecretsError(str(exc)) from None
    return signer, public


def load_server_secrets(
    state_dir: Path,
    log_dir: Path,
    token_file: Path | None = None,
    signing_key: Path | None = None,
) -> ServerSecrets:
    """Create the state folder (0700) if needed, then load or create the token and key."""
    if _within(state_dir, log_dir):
        raise SecretsError(
            f"the state folder {state_dir} is the log folder {log_dir} or inside it: "
            "publishing the logs would publish the signing key. Give another --state-dir"
        )
    for what, path in (("organiser token file", token_file), ("signing key", signing_key)):
        if path is not None and _within(path, log_dir):
            raise SecretsError(f"the {what} {path} is inside the log folder {log_dir}")
    needs_dir = token_file is None or signing_key is None
    if needs_dir:
        existed = state_dir.exists()
        try:
            state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not existed:
                os.chmod(state_dir, 0o700)  # mkdir's mode is masked by the umask
        except OSError as exc:
            raise SecretsError(f"cannot create the state folder {state_dir}: {exc}") from None
    token_path = token_file or state_dir / TOKEN_FILE
    key_path = signing_key or state_dir / KEY_FILE
    try:
        token, token_created = load_or_create_token(token_path)
        if signing_key is not None:
            signer, key_created = LogSigner.load(signing_key), False
        else:
            signer, key_created = LogSigner.load_or_create(key_path)
    except (TokenError, SigningKeyError) as exc:
        raise SecretsError(str(exc)) from None
    public_path: Path | None = None
    if signing_key is None:
        public_path = state_dir / PUBLIC_KEY_FILE
        try:
            public_path.write_text(signer.public_key_text + "\n", encoding="ascii")
        except OSError as exc:
            raise SecretsError(f"cannot write {public_path}: {exc}") from None
    return ServerSecrets(
        token, token_path, token_created, signer, key_path, key_created, public_path
    )


# -- where a running referee serve listens (the record: referee.client.serving) -----


def local_address(address: str) -> str:
    """Where a client on this machine reaches a listener: a wildcard host is loopback.

    >>> [local_address(a) for a in ("0.0.0.0:5", "[::]:5", "10.0.0.2:5", "127.0.0.1:5")]
    ['127.0.0.1:5', '[::1]:5', '10.0.0.2:5', '127.0.0.1:5']
    """
    host, _, port = address.rpartition(":")
    if host == "0.0.0.0":
        return f"127.0.0.1:{port}"
    if host in ("[::]", "::", ""):
        return f"[::1]:{port}"
    return address


def record_serving(state_dir: Path, serving: Serving) -> Path:
    """Write ``serving`` to the state folder, whole (a reader never sees half of it) and
    private; raises OSError."""
    path = state_dir / SERVING_FILE
    text = json.dumps(dataclasses.asdict(serving), indent=2) + "\n"
    replace_private_file(path, text.encode("utf-8"))
    return path


def forget_serving(state_dir: Path, pid: int) -> None:
    """Remove the record at exit, if it is still this process's (a second referee on the
    same state folder may have written its own since)."""
    path = state_dir / SERVING_FILE
    try:
        mine = read_serving(state_dir)
    except ServingError:
        return
    if mine is not None and mine.pid == pid:
        path.unlink(missing_ok=True)
