"""A real certificate authority for tests: a CA, server and client certificates, PEM files.

Made with the ``cryptography`` library, checked by gRPC exactly as production
certificates are (no check is turned off): the server certificate names 127.0.0.1,
::1 and localhost, the client certificate is for client authentication only.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclasses.dataclass(frozen=True)
class Issued:
    cert: Path
    key: Path


class TestCA:
    """A CA in ``folder``: ``ca.pem``; ``server()`` and ``client()`` issue certificates."""

    __test__ = False  # not a test class for pytest

    def __init__(self, folder: Path, name: str = "pusoy test CA") -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.key = _key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        self.name = subject
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )
        self.path = folder / f"{name.replace(' ', '-')}.pem"
        self.path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def _issue(self, name: str, usage: ExtendedKeyUsageOID, sans: list[x509.GeneralName]) -> Issued:
        key = _key()
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        out = Issued(self.folder / f"{name}.pem", self.folder / f"{name}.key")
        out.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        out.key.write_bytes(_pem_key(key))
        out.key.chmod(0o600)
        return out

    def server(self, name: str = "server") -> Issued:
        return self._issue(
            name,
            ExtendedKeyUsageOID.SERVER_AUTH,
            [
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.IPAddress(ipaddress.ip_address("::1")),
            ],
        )

    def client(self, name: str = "client") -> Issued:
        return self._issue(name, ExtendedKeyUsageOID.CLIENT_AUTH, [])
