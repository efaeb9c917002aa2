"""TLS for the referee's listeners and for the clients the referee package itself runs
(organiser channels, built-in bots in a tournament).

Plaintext is the default only on loopback: binding any other address without TLS
needs an explicit ``insecure`` (``referee serve --insecure``).
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path

import grpc


class TlsError(ValueError):
    """A certificate or key file that cannot be used, or a listener that would be open
    to the network in plaintext; the message says which and what to do."""


def _read(path: Path, what: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TlsError(f"cannot read the {what} {path}: {exc.strerror}") from None
    if b"-----BEGIN" not in data:
        raise TlsError(f"the {what} {path} is not PEM")
    return data


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
        chain = _read(self.cert, "certificate")
        key = _read(self.key, "private key")
        client_ca = _read(self.client_ca, "client CA") if self.client_ca else None
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
            root_certificates=_read(self.ca, "CA certificate") if self.ca else None,
            private_key=_read(self.key, "client key") if self.key else None,
            certificate_chain=_read(self.cert, "client certificate") if self.cert else None,
        )

    def options(self) -> list[tuple[str, str]]:
        if self.server_name:
            return [("grpc.ssl_target_name_override", self.server_name)]
        return []


def client_channel(
    address: str,
    tls: ClientTls | None = None,
    interceptors: list[grpc.aio.ClientInterceptor] | None = None,
) -> grpc.aio.Channel:
    """A channel to a referee: TLS when ``tls`` is given, else plaintext."""
    if tls is None:
        return grpc.aio.insecure_channel(address, interceptors=interceptors)
    return grpc.aio.secure_channel(
        address, tls.credentials(), options=tls.options(), interceptors=interceptors
    )
