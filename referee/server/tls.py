"""TLS for the referee's listeners: plaintext is the default only on loopback, and
binding any other address without TLS needs an explicit ``insecure``
(``referee serve --insecure``).

The client's side (``ClientTls``, and the PEM files both ends read) is
``referee.client.tls``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path

import grpc

from referee.client.tls import TlsError, read_pem


def host_of(address: str) -> str:
    """The host part of ``host:port`` (brackets of an IPv6 literal removed)."""
    host = address.rsplit(":", 1)[0] if ":" in address else address
    return host.strip("[]")


def is_loopback(address: str) -> bool:
    """Whether a listen address reaches this machine only.

    >>> [is_loopback(a) for a in ("127.0.0.1:0", "localhost:50051", "[::1]:1", "0.0.0.0:1")]
    [True, True, True, False]
    """
    host = host_of(address)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


@dataclasses.dataclass(frozen=True, slots=True)
class ServerTls:
    """A listener's certificate chain and key, and the CA that client certificates must
    be signed by (mutual TLS) when one is given."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        chain = read_pem(self.cert, "certificate")
        key = read_pem(self.key, "private key")
        client_ca = read_pem(self.client_ca, "client CA") if self.client_ca else None
        try:
            return grpc.ssl_server_credentials(
                [(key, chain)],
                root_certificates=client_ca,
                require_client_auth=client_ca is not None,
            )
        except (RuntimeError, ValueError) as exc:  # grpc's own complaint
            raise TlsError(f"cannot use {self.cert} and {self.key}: {exc}") from None
