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


def server_tls(cert: str | None, key: str | None, client_ca: str | None) -> ServerTls | None:
    """A listener's TLS from its files as given (``referee serve --tls-cert --tls-key
    --tls-client-ca``); None: plaintext. TlsError for files that do not go together."""
    if bool(cert) != bool(key):
        raise TlsError("--tls-cert and --tls-key go together")
    if client_ca and not cert:
        raise TlsError("--tls-client-ca needs --tls-cert and --tls-key")
    if not cert or not key:
        return None
    return ServerTls(Path(cert), Path(key), Path(client_ca) if client_ca else None)


def check_plaintext_http(flag: str, address: str, insecure: bool) -> None:
    """The gRPC listeners' rule for the web pages and the metrics, which have no TLS of
    their own: plaintext on an address other machines reach only when ``insecure``.
    TlsError naming ``flag`` otherwise."""
    host, _, port = address.rpartition(":")
    if not insecure and not is_loopback(f"{host or '127.0.0.1'}:{port}"):
        raise TlsError(
            f"refusing to serve {flag} {address} in plaintext: it is reachable from other "
            "machines (--insecure to serve it anyway, or a TLS proxy in front of a loopback "
            "address)"
        )
