"""Who a request really comes from, behind reverse proxies the organiser trusts.

A web front behind a proxy (TLS termination, a load balancer) sees every request come
from the proxy's address, so anything counted per client address (refused keys, uploads)
would count everyone together. A trusted proxy says who its client was in ``Forwarded``
(RFC 7239) or ``X-Forwarded-For`` (and ``X-Forwarded-Proto``); those headers are read
only on a request whose peer is one of the configured proxies: anyone else could write
them. The chain is read from the right (each proxy appends the address it got the
request from), skipping trusted proxies; the first address that is not one is the
client. What lies left of it was written by that client and is never believed.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Sequence

from aiohttp import web

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_HOPS = 32
"""Entries of a forwarded chain looked at (from the right); a longer chain is cut."""
MAX_HEADER_CHARS = 4096


@dataclasses.dataclass(frozen=True, slots=True)
class Client:
    """A request's client: its address (an IP in text, or a proxy's opaque name for it)
    and whether it reached the first trusted proxy over TLS (None: not said)."""

    address: str
    secure: bool | None = None

    @property
    def loopback(self) -> bool:
        return _is_loopback(self.address)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None


def _is_loopback(text: str) -> bool:
    ip = _ip(text)
    return ip is not None and ip.is_loopback


def _node(text: str) -> str:
    """An address out of a ``Forwarded`` node or an ``X-Forwarded-For`` entry:
    ``192.0.2.1``, ``192.0.2.1:80``, ``[2001:db8::1]:80``, ``2001:db8::1``; else the
    text as it is (``unknown``, an obfuscated ``_name``).

    >>> [_node(t) for t in ('"[2001:db8::1]:4711"', "192.0.2.60:80", "::1", "_hidden")]
    ['2001:db8::1', '192.0.2.60', '::1', '_hidden']
    """
    text = text.strip().strip('"').strip()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    if text.count(":") == 1:
        return text.split(":", 1)[0]
    return text


class TrustedProxies:
    """The proxies whose forwarding headers are believed (none: every request is its
    peer's)."""

    def __init__(self, networks: Sequence[IPNetwork] = ()) -> None:
        self.networks = tuple(networks)

    def trusted(self, address: str) -> bool:
        ip = _ip(address)
        return ip is not None and any(ip in net for net in self.networks)

    def client(self, request: web.Request) -> Client:
        """The request's client (module docstring); its peer when that is no trusted
        proxy or the proxy said nothing."""
        peer = request.remote or ""
        if not self.trusted(peer):
            return Client(peer or "unknown", request.secure)
        hops = self._forwarded(request) or self._x_forwarded(request)
        client = Client(peer, None)
        for hop in reversed(hops[-MAX_HOPS:]):
            client = hop
            if not self.trusted(hop.address):
                break
        if client.address == peer and client.secure is None:
            return Client(peer, request.secure)
        return client

    @staticmethod
    def _header(request: web.Request, name: str) -> str:
        return ",".join(request.headers.getall(name, []))[-MAX_HEADER_CHARS:]

    def _forwarded(self, request: web.Request) -> list[Client]:
        hops = []
        for element in self._header(request, "Forwarded").split(","):
            pairs = {}
            for pair in element.split(";"):
                key, _, value = pair.partition("=")
                pairs[key.strip().lower()] = value.strip().strip('"')
            if "for" in pairs:
                proto = pairs.get("proto", "").lower()
                hops.append(Client(_node(pairs["for"])[:100], proto == "https" if proto else None))
        return hops

    def _x_forwarded(self, request: web.Request) -> list[Client]:
        addresses = [_node(a)[:100] for a in self._header(request, "X-Forwarded-For").split(",")]
        addresses = [a for a in addresses if a]
        protos = [p.strip().lower() for p in self._header(request, "X-Forwarded-Proto").split(",")]
        protos = [p for p in protos if p]
        hops = []
        for i, address in enumerate(addresses):
            # aligned from the right, as both lists grow at each hop; a proxy that sets
            # one proto for the chain gives it to every hop
            back = len(addresses) - i
            proto = protos[-back] if back <= len(protos) else (protos[0] if protos else "")
            hops.append(Client(address, proto == "https" if proto else None))
        return hops


__all__ = ["Client", "TrustedProxies"]
