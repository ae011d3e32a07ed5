"""Signed worker-to-worker REST requests: session keys and Kafka's ``InternalRequestSignature``.

With ``connect.protocol=sessioned`` the leader generates a session key
(``inter.worker.key.generation.algorithm``/``.size``), writes it to the config topic as
``session-key`` and rotates it every ``inter.worker.key.ttl.ms``. A worker sending an internal
request (``POST /connectors/{c}/tasks``, ``PUT /connectors/{c}/fence``) signs the exact body
bytes; the receiver verifies them with the key it read from the config topic.

Public API:

- :class:`SessionKey` — ``key`` (raw bytes), ``algorithm``, ``creation_timestamp`` (ms);
  :meth:`SessionKey.generate`, and :meth:`~SessionKey.to_record`/:meth:`~SessionKey.from_record`
  for the config-topic value ``{"key": base64, "algorithm": ..., "creation-timestamp": ms}``.
- :func:`sign` -> the two headers ``X-Connect-Authorization`` (base64 HMAC of the body) and
  ``X-Connect-Request-Signature-Algorithm``.
- :class:`InternalRequestSignature` — :meth:`~InternalRequestSignature.from_headers` (``None``
  when either header is missing; 400 for an unknown algorithm or bad base64),
  :attr:`~InternalRequestSignature.key_algorithm`, :meth:`~InternalRequestSignature.is_valid`.
- :func:`verify_internal_request` — Kafka's ``requestNotSignedProperly`` checks in order:
  no signature -> 400 ``Internal request missing required signature``; an algorithm not in
  ``inter.worker.verification.algorithms`` -> 400; no session key read yet -> 503; a wrong
  signature -> 403 ``Internal request contained invalid signature.``. Raises
  :class:`~sparkcat.runtime.rest.errors.ConnectRestError` with that status, which the REST error
  mapper renders as Kafka's ``{"error_code", "message"}``.
- :func:`mac_algorithms`, :func:`key_generator_algorithms`, :func:`key_length` — the Java
  algorithm names this worker supports (``HmacSHA256`` etc.) and their key sizes.

Algorithm names are looked up ignoring case (as the JVM does) and compared verbatim
against the verification list (as Kafka does).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sparkcat.runtime.rest.errors import BadRequestError, ConnectRestError

SIGNATURE_HEADER = "X-Connect-Authorization"
SIGNATURE_ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"
DEFAULT_ALGORITHM = "HmacSHA256"

# Java name -> (hashlib name, the JVM KeyGenerator's default key size in bytes).
_HMACS: dict[str, tuple[str, int]] = {
    "HmacMD5": ("md5", 64),
    "HmacSHA1": ("sha1", 64),
    "HmacSHA224": ("sha224", 28),
    "HmacSHA256": ("sha256", 32),
    "HmacSHA384": ("sha384", 48),
    "HmacSHA512": ("sha512", 64),
    "HmacSHA512/224": ("sha512_224", 28),
    "HmacSHA512/256": ("sha512_256", 32),
    "HmacSHA3-224": ("sha3_224", 28),
    "HmacSHA3-256": ("sha3_256", 32),
    "HmacSHA3-384": ("sha3_384", 48),
    "HmacSHA3-512": ("sha3_512", 64),
}
_SUPPORTED = tuple(
    name for name, (digest, _) in _HMACS.items() if digest in hashlib.algorithms_available
)


def mac_algorithms() -> tuple[str, ...]:
    """MAC algorithm names (Java's) usable for signing and verification here."""
    return _SUPPORTED


def key_generator_algorithms() -> tuple[str, ...]:
    """Key generation algorithm names (Java's) supported here (the HMAC family)."""
    return _SUPPORTED


def _canonical(algorithm: str) -> str | None:
    for name in _SUPPORTED:
        if name.lower() == algorithm.lower():
            return name
    return None


def key_length(algorithm: str, key_size_bits: int | None = None) -> int:
    """The key length in bytes that ``algorithm`` generates: its default, or
    ``key_size_bits`` rounded up to whole bytes. ValueError as the JVM would refuse."""
    name = _canonical(algorithm)
    if name is None:
        raise ValueError(f"{algorithm} KeyGenerator not available")
    if key_size_bits is None:
        return _HMACS[name][1]
    if key_size_bits < 40:
        raise ValueError("Key length must be at least 40 bits")
    return (key_size_bits + 7) // 8


class _HasKey(Protocol):
    @property
    def key(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class SessionKey:
    """The cluster's current session key (Kafka's ``SessionKey``). Functions here accept any
    object with a ``key`` bytes attribute too (such as the config store's session key)."""

    key: bytes
    algorithm: str
    creation_timestamp: int

    def __repr__(self) -> str:  # never log the secret
        return f"SessionKey(algorithm={self.algorithm!r}, created={self.creation_timestamp})"

    @classmethod
    def generate(cls, algorithm: str, key_size_bits: int | None, now_ms: int) -> SessionKey:
        """A fresh random key per ``inter.worker.key.generation.algorithm``/``.size``."""
        return cls(secrets.token_bytes(key_length(algorithm, key_size_bits)), algorithm, now_ms)

    def to_record(self) -> dict[str, Any]:
        """The config-topic value of the ``session-key`` record."""
        return {
            "key": base64.b64encode(self.key).decode("ascii"),
            "algorithm": self.algorithm,
            "creation-timestamp": self.creation_timestamp,
        }

    @classmethod
    def from_record(cls, value: Mapping[str, Any]) -> SessionKey:
        return cls(
            base64.b64decode(str(value["key"])),
            str(value["algorithm"]),
            int(value["creation-timestamp"]),
        )

    def expires_at(self, ttl_ms: int) -> int:
        """When the leader must rotate the key: creation time + ``inter.worker.key.ttl.ms``."""
        return self.creation_timestamp + ttl_ms


def _mac(key: bytes, algorithm: str, body: bytes) -> bytes:
    name = _canonical(algorithm)
    if name is None:
        raise ValueError(f"Algorithm {algorithm} not available")
    return hmac.new(key, body, _HMACS[name][0]).digest()


def sign(
    key: SessionKey | bytes, body: bytes, algorithm: str = DEFAULT_ALGORITHM
) -> dict[str, str]:
    """The headers that sign ``body`` (the exact bytes sent) with ``algorithm``
    (``inter.worker.signature.algorithm``)."""
    raw = key if isinstance(key, bytes) else key.key
    signature = base64.b64encode(_mac(raw, algorithm, body)).decode("ascii")
    return {SIGNATURE_HEADER: signature, SIGNATURE_ALGORITHM_HEADER: algorithm}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class InternalRequestSignature:
    """A received request's body, signature algorithm and signature."""

    body: bytes
    key_algorithm: str
    signature: bytes

    @classmethod
    def from_headers(
        cls, body: bytes, headers: Mapping[str, str]
    ) -> InternalRequestSignature | None:
        """The signature carried by ``headers`` (HTTP headers, any case), or ``None`` when
        either header is missing. Raises :class:`BadRequestError` (400) for an algorithm
        this worker does not know or a signature that is not base64."""
        algorithm = _header(headers, SIGNATURE_ALGORITHM_HEADER)
        encoded = _header(headers, SIGNATURE_HEADER)
        if algorithm is None or encoded is None:
            return None
        if _canonical(algorithm) is None:
            raise BadRequestError(f"Algorithm {algorithm} not available")
        try:
            signature = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadRequestError(str(e)) from None
        return cls(body, algorithm, signature)

    def is_valid(self, key: _HasKey | bytes) -> bool:
        """True when the signature is the HMAC of the body under ``key`` (constant time)."""
        raw = key if isinstance(key, bytes) else key.key
        return hmac.compare_digest(_mac(raw, self.key_algorithm, self.body), self.signature)


def verify_internal_request(
    body: bytes,
    headers: Mapping[str, str],
    session_key: _HasKey | None,
    verification_algorithms: list[str] | tuple[str, ...],
) -> None:
    """Kafka's checks of an internal request; returns when it is properly signed, raises
    :class:`ConnectRestError` (400, 503 or 403 with Kafka's message) otherwise."""
    signature = InternalRequestSignature.from_headers(body, headers)
    if signature is None:
        raise BadRequestError("Internal request missing required signature")
    if signature.key_algorithm not in verification_algorithms:
        raise BadRequestError(
            f"This worker does not support the '{signature.key_algorithm}' key signing "
            f"algorithm used by other workers. This worker is currently configured to use: "
            f"[{', '.join(verification_algorithms)}]. Check that all workers' configuration "
            "files permit the same set of signature algorithms, and correct any misconfigured "
            "worker and restart it."
        )
    if session_key is None:
        raise ConnectRestError(
            "This worker is still starting up and has not been able to read a session key "
            "from the config topic yet",
            503,
        )
    if not signature.is_valid(session_key):
        raise ConnectRestError("Internal request contained invalid signature.", 403)


__all__ = [
    "DEFAULT_ALGORITHM",
    "SIGNATURE_ALGORITHM_HEADER",
    "SIGNATURE_HEADER",
    "InternalRequestSignature",
    "SessionKey",
    "key_generator_algorithms",
    "key_length",
    "mac_algorithms",
    "sign",
    "verify_internal_request",
]
