"""TLS for the REST listeners: Kafka's ``listeners.https.ssl.*`` settings (``RestServerConfig``).

For an ``https://`` listener the SSL settings are the worker's keys with the prefix
``listeners.https.`` (``admin.listeners.https.`` for admin listeners) when at least one such
key is set, else the worker's plain ``ssl.*`` keys -- Kafka's all-or-nothing rule:

- ``ssl.keystore.location`` / ``ssl.keystore.password`` / ``ssl.key.password`` /
  ``ssl.keystore.type``: ``PEM`` (one file holding the certificate chain and the private
  key) or ``PKCS12``; ``JKS`` cannot be read by Python. Inline PEM also works:
  ``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``.
- ``ssl.truststore.location`` / ``ssl.truststore.password`` / ``ssl.truststore.type``
  (``PEM`` or ``PKCS12``), or inline ``ssl.truststore.certificates``: the CAs client
  certificates are checked against.
- ``ssl.client.auth``: ``required`` (no client certificate: the TLS handshake fails),
  ``requested`` (checked when sent) or ``none``.

Values may be config-provider variables (``${file:...:keystore.password}``). The same
settings make the client side of worker-to-worker requests (:func:`client_context`), as
Kafka's ``RestClient`` does. PKCS12 stores are converted to PEM in a private temporary
directory that :class:`ServerTls` removes once the server has loaded them.
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.config_provider import resolve_worker

LISTENERS_HTTPS_PREFIX = "listeners.https."
ADMIN_LISTENERS_HTTPS_PREFIX = "admin.listeners.https."
SSL_CLIENT_AUTH_CONFIG = "ssl.client.auth"
_CLIENT_AUTH = {
    "required": ssl.CERT_REQUIRED,
    "requested": ssl.CERT_OPTIONAL,
    "none": ssl.CERT_NONE,
}


def ssl_settings(worker: Mapping[str, Any], prefix: str = LISTENERS_HTTPS_PREFIX) -> dict[str, str]:
    """The ``ssl.*`` settings of a listener: prefixed ones if any is set, else the worker's."""
    resolved = resolve_worker(worker)
    prefixed = {k[len(prefix) :]: v for k, v in resolved.items() if k.startswith(prefix)}
    chosen = prefixed or resolved
    return {k: v for k, v in chosen.items() if k.startswith("ssl.")}


@dataclass
class ServerTls:
    """Files and options for uvicorn's ``ssl_*`` settings; :meth:`cleanup` when loaded."""

    certfile: str
    keyfile: str | None
    password: str | None
    ca_certs: str | None
    cert_reqs: int
    _tmp: str | None = field(default=None, repr=False)

    def uvicorn_options(self) -> dict[str, Any]:
        return {
            "ssl_certfile": self.certfile,
            "ssl_keyfile": self.keyfile,
            "ssl_keyfile_password": self.password,
            "ssl_ca_certs": self.ca_certs,
            "ssl_cert_reqs": self.cert_reqs,
        }

    def cleanup(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def server_tls(settings: Mapping[str, str]) -> ServerTls:
    """The server side of an https listener from its ``ssl.*`` ``settings``."""
    auth = settings.get(SSL_CLIENT_AUTH_CONFIG, "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise ConfigError(
            SSL_CLIENT_AUTH_CONFIG, auth, "String must be one of: required, requested, none"
        )
    tmp = tempfile.mkdtemp(prefix="sparkcat-tls-")
    try:
        certfile, keyfile, password = _keystore(settings, Path(tmp))
        if certfile is None:
            raise ConfigError("ssl.keystore.location", None, "An https listener needs a key store")
        ca_certs = _truststore(settings, Path(tmp))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if auth != "none" and ca_certs is None:
        raise ConfigError(SSL_CLIENT_AUTH_CONFIG, auth, "Client authentication needs a trust store")
    return ServerTls(certfile, keyfile, password, ca_certs, _CLIENT_AUTH[auth], tmp)


def client_context(worker: Mapping[str, Any]) -> ssl.SSLContext:
    """The client side of requests to other workers' https listeners: trusts the listener's
    trust store (the system's CAs when none is set) and presents its key store when one is
    set (for listeners with ``ssl.client.auth=required``)."""
    return tls_client_context(ssl_settings(worker))


def tls_client_context(settings: Mapping[str, str], check_hostname: bool = True) -> ssl.SSLContext:
    """A client context from Kafka's ``ssl.*`` ``settings`` (already resolved): the trust
    store (the system's CAs when none is set; the server's certificate is always verified),
    the key store when one is set, and host name checking as asked. PKCS12 stores and
    inline PEM pass through a private temporary directory, removed once loaded."""
    tmp = Path(tempfile.mkdtemp(prefix="sparkcat-tls-"))
    try:
        ca_certs = _truststore(settings, tmp)
        context = ssl.create_default_context(cafile=ca_certs)
        context.check_hostname = check_hostname
        certfile, keyfile, password = _keystore(settings, tmp)
        if certfile is not None:
            context.load_cert_chain(certfile, keyfile, password)
        return context
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _keystore(settings: Mapping[str, str], tmp: Path) -> tuple[str | None, str | None, str | None]:
    """``(certfile, keyfile, key password)`` from the key store settings."""
    chain, key = settings.get("ssl.keystore.certificate.chain"), settings.get("ssl.keystore.key")
    password = settings.get("ssl.key.password") or settings.get("ssl.keystore.password") or None
    if chain and key:
        return _write(tmp / "chain.pem", chain), _write(tmp / "key.pem", key), password
    location = settings.get("ssl.keystore.location")
    if not location:
        return None, None, None
    kind = settings.get("ssl.keystore.type", "JKS").strip().upper()
    if kind == "PEM":
        return location, None, password
    if kind == "PKCS12":
        store_password = settings.get("ssl.keystore.password")
        key_pem, chain_pem = _pkcs12(location, store_password, with_key=True)
        return _write(tmp / "chain.pem", chain_pem), _write(tmp / "key.pem", key_pem), None
    raise ConfigError("ssl.keystore.type", kind, "Only PEM and PKCS12 key stores are supported")


def _truststore(settings: Mapping[str, str], tmp: Path) -> str | None:
    inline = settings.get("ssl.truststore.certificates")
    if inline:
        return _write(tmp / "trust.pem", inline)
    location = settings.get("ssl.truststore.location")
    if not location:
        return None
    kind = settings.get("ssl.truststore.type", "JKS").strip().upper()
    if kind == "PEM":
        return location
    if kind == "PKCS12":
        _, certs = _pkcs12(location, settings.get("ssl.truststore.password"), with_key=False)
        return _write(tmp / "trust.pem", certs)
    raise ConfigError("ssl.truststore.type", kind, "Only PEM and PKCS12 trust stores are supported")


def _pkcs12(location: str, password: str | None, with_key: bool) -> tuple[str, str]:
    """``(private key PEM, certificates PEM)`` of a PKCS12 file."""
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        pkcs12,
    )

    data = Path(location).read_bytes()
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as exc:
        raise ConfigError(f"Could not read the PKCS12 store {location}: {exc}") from exc
    certs = []
    if store.cert is not None:
        certs.append(store.cert.certificate)
    certs.extend(c.certificate for c in store.additional_certs)
    chain = "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)
    if not with_key:
        return "", chain
    if store.key is None:
        raise ConfigError(f"The PKCS12 key store {location} holds no private key")
    key = store.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    return key, chain


def _write(path: Path, text: str) -> str:
    path.touch(mode=0o600)
    path.write_text(text, encoding="utf-8")
    return str(path)


__all__ = [
    "ADMIN_LISTENERS_HTTPS_PREFIX",
    "LISTENERS_HTTPS_PREFIX",
    "ServerTls",
    "client_context",
    "server_tls",
    "ssl_settings",
    "tls_client_context",
]
