"""TLS as a client of a referee sees it: the CA that checks the referee, the certificate
that proves the client (mutual TLS), and the PEM files both ends read.

Plaintext is a choice the caller makes (no ``ClientTls``); the server's side of the
rules (plaintext only on loopback unless ``--insecure``) is ``referee.server.tls``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc


class TlsError(ValueError):
    """A certificate or key file that cannot be used, or a listener that would be open
    to the network in plaintext; the message says which and what to do."""


def read_pem(path: Path, what: str) -> bytes:
    """A PEM file's bytes; TlsError naming ``what`` when it cannot be read or is not PEM."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TlsError(f"cannot read the {what} {path}: {exc.strerror}") from None
    if b"-----BEGIN" not in data:
        raise TlsError(f"the {what} {path} is not PEM")
    return data


@dataclasses.dataclass(frozen=True, slots=True)
class ClientTls:
    """How a client checks the referee (``ca``) and, for mutual TLS, proves itself.

    ``server_name`` overrides the name checked against the server's certificate (when
    the address is an IP the certificate does not list)."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    server_name: str = ""

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise TlsError("a client certificate needs its key, and a key its certificate")

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=read_pem(self.ca, "CA certificate") if self.ca else None,
            private_key=read_pem(self.key, "client key") if self.key else None,
            certificate_chain=read_pem(self.cert, "client certificate") if self.cert else None,
        )

    def options(self) -> list[tuple[str, str]]:
        if self.server_name:
            return [("grpc.ssl_target_name_override", self.server_name)]
        return []
