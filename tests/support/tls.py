"""A throw-away test CA (``cryptography``): server and client certificates as PEM and PKCS12."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    """One certificate: ``pem`` holds the certificate and its key, ``p12`` the same as PKCS12
    (password ``password``), ``cert``/``key`` the two halves."""

    pem: Path
    cert: Path
    key: Path
    p12: Path


@dataclass(frozen=True)
class Authority:
    ca: Path  # the CA certificate (PEM): the trust store
    ca_p12: Path  # the same as a PKCS12 trust store (password "password")
    server: Issued
    client: Issued


P12_PASSWORD = "password"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(directory: Path) -> Authority:
    """A CA, a server certificate for ``localhost``/``127.0.0.1`` and a client certificate."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("sparkcat test CA"))
        .issuer_name(_name("sparkcat test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = directory / "ca.pem"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    ca_p12 = directory / "ca.p12"
    ca_p12.write_bytes(
        pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca_cert, b"ca")],
            serialization.BestAvailableEncryption(P12_PASSWORD.encode()),
        )
    )

    def issue(name: str, usage: x509.ObjectIdentifier) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
            )
        )
        if usage == ExtendedKeyUsageOID.SERVER_AUTH:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        paths = Issued(
            directory / f"{name}.pem",
            directory / f"{name}.crt",
            directory / f"{name}.key",
            directory / f"{name}.p12",
        )
        paths.pem.write_bytes(cert_pem + key_pem)
        paths.cert.write_bytes(cert_pem)
        paths.key.write_bytes(key_pem)
        paths.p12.write_bytes(
            pkcs12.serialize_key_and_certificates(
                name.encode(),
                key,
                cert,
                [ca_cert],
                serialization.BestAvailableEncryption(P12_PASSWORD.encode()),
            )
        )
        return paths

    return Authority(
        ca_path,
        ca_p12,
        issue("server", ExtendedKeyUsageOID.SERVER_AUTH),
        issue("client", ExtendedKeyUsageOID.CLIENT_AUTH),
    )


__all__ = ["P12_PASSWORD", "Authority", "Issued", "make_ca"]


def mutual_tls_server_context(ca: Authority) -> ssl.SSLContext:
    """A server-side context with the test server certificate that requires a client
    certificate signed by the test CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(ca.server.pem))
    context.load_verify_locations(str(ca.ca))
    context.verify_mode = ssl.CERT_REQUIRED
    return context
