"""The group membership client's security settings: Kafka's worker keys as kafka-python's.

The membership (:mod:`.membership`) is kafka-python's; every other client is librdkafka's
(:mod:`sparkcat.kafka.clients`). As in Kafka's ``WorkerGroupMember``, it uses the worker's
unprefixed settings, resolved with the worker's config providers:

==========================================  ==============================================
worker key                                  kafka-python
==========================================  ==============================================
``security.protocol``                       ``security_protocol`` (all four of Kafka's)
``sasl.mechanism``                          ``sasl_mechanism``: PLAIN, SCRAM-SHA-256/512
``sasl.jaas.config`` (Plain/ScramLogin…)    ``sasl_plain_username``/``sasl_plain_password``
``ssl.truststore.*`` (PEM, PKCS12, inline)  ``ssl_context``: the CAs the broker is checked
``ssl.keystore.*``, ``ssl.key.password``    against, the client certificate (mutual TLS),
``ssl.endpoint.identification.algorithm``   and host name checking (``https``: on; empty:
                                            off), built as the REST client's context is
==========================================  ==============================================

What kafka-python cannot do is refused at start with a :class:`ConfigError` naming the key:
GSSAPI (Kerberos) and OAUTHBEARER logins, JKS stores, a SASL login without a PLAIN/SCRAM
``sasl.jaas.config``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.errors import ConfigError
from sparkcat.kafka.clients import jaas_login
from sparkcat.runtime.config_provider import resolve_worker

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def kafka_python_security(worker: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python client settings for the worker config ``worker`` (may hold variables)."""
    settings = {k: str(v) for k, v in resolve_worker(worker).items() if v is not None}
    protocol = settings.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ConfigError(
            "security.protocol", protocol, f"String must be one of: {', '.join(PROTOCOLS)}"
        )
    out: dict[str, Any] = {"security_protocol": protocol}
    if protocol.startswith("SASL_"):
        out.update(_sasl(settings))
    if protocol.endswith("SSL"):
        out["ssl_context"] = _ssl_context(settings)
    return out


def _sasl(settings: Mapping[str, str]) -> dict[str, str]:
    mechanism = settings.get("sasl.mechanism", "GSSAPI").strip().upper()
    if mechanism not in MECHANISMS:
        raise ConfigError(
            "sasl.mechanism",
            mechanism,
            "distributed mode's group membership (kafka-python) supports "
            f"{', '.join(MECHANISMS)} only",
        )
    jaas = settings.get("sasl.jaas.config", "")
    login = jaas_login(jaas) if jaas else None
    if not login or "username" not in login or "password" not in login:
        raise ConfigError(
            "sasl.jaas.config",
            "[hidden]" if jaas else None,
            f"{mechanism} needs a PlainLoginModule or ScramLoginModule login with username "
            "and password",
        )
    return {
        "sasl_mechanism": mechanism,
        "sasl_plain_username": login["username"],
        "sasl_plain_password": login["password"],
    }


def _ssl_context(settings: Mapping[str, str]) -> Any:
    from sparkcat.runtime.rest.tls import tls_client_context

    ssl_keys = {k: v for k, v in settings.items() if k.startswith("ssl.")}
    algorithm = settings.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("", "https"):
        raise ConfigError(
            "ssl.endpoint.identification.algorithm", algorithm, "Must be https or empty"
        )
    return tls_client_context(ssl_keys, check_hostname=algorithm == "https")


__all__ = ["MECHANISMS", "PROTOCOLS", "kafka_python_security"]
