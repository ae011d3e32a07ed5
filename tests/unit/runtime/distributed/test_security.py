"""The group membership's security settings: Kafka's worker keys as kafka-python's.

The TLS contexts are checked by real handshakes with a local TLS server (the test CA of
tests/support/tls.py) that requires a client certificate: the context must trust the
server's CA, present the client key store, and check (or not) the host name."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.tls import P12_PASSWORD, Authority, make_ca, mutual_tls_server_context

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.distributed.security import kafka_python_security

KAFKA = "org.apache.kafka.common.config.provider."
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_ca(tmp_path_factory.mktemp("ca"))


def _jaas(module: str, user: str, password: str) -> str:
    return f'{module} required username="{user}" password="{password}";'


def test_plaintext_by_default() -> None:
    assert kafka_python_security({}) == {"security_protocol": "PLAINTEXT"}
    assert kafka_python_security({"security.protocol": "plaintext"}) == {
        "security_protocol": "PLAINTEXT"
    }


@pytest.mark.parametrize(
    ("mechanism", "module"),
    [("PLAIN", PLAIN), ("SCRAM-SHA-256", SCRAM), ("SCRAM-SHA-512", SCRAM)],
)
def test_sasl_plaintext_logins_from_the_jaas_line(mechanism: str, module: str) -> None:
    settings = kafka_python_security({
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
        "sasl.jaas.config": _jaas(module, "connect", 'pa"ss'.replace('"', '\\"')),
    })  # fmt: skip
    assert settings == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "connect",
        "sasl_plain_password": 'pa"ss',
    }


def test_the_jaas_line_may_come_from_a_config_provider(tmp_path: Path) -> None:
    (tmp_path / "jaas").write_text(_jaas(SCRAM, "worker", "s3cret"), encoding="utf-8")
    settings = kafka_python_security({
        "config.providers": "dir", "config.providers.dir.class": KAFKA + "DirectoryConfigProvider",
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f"${{dir:{tmp_path}:jaas}}",
    })  # fmt: skip
    assert (settings["sasl_plain_username"], settings["sasl_plain_password"]) == (
        "worker", "s3cret",
    )  # fmt: skip


class TlsServer:
    """Accepts TLS connections on 127.0.0.1 with the test server certificate, requiring a
    client certificate signed by the test CA; remembers the client certificates' subjects."""

    def __init__(self, ca: Authority) -> None:
        self.context = mutual_tls_server_context(ca)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.clients: list[Any] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            try:
                with self.context.wrap_socket(conn, server_side=True) as tls:
                    self.clients.append(tls.getpeercert()["subject"])
                    tls.sendall(b"ok")
            except (ssl.SSLError, OSError):
                conn.close()

    def handshake(self, context: ssl.SSLContext, host: str) -> bytes:
        with (
            socket.create_connection(("127.0.0.1", self.port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname=host) as tls,
        ):
            return tls.recv(2)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server(ca: Authority) -> Any:
    tls = TlsServer(ca)
    yield tls
    tls.close()


def test_ssl_with_pem_stores_checks_the_host_name(ca: Authority, server: TlsServer) -> None:
    settings = kafka_python_security({
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.ca),
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(ca.client.pem),
    })  # fmt: skip
    assert settings["security_protocol"] == "SSL"
    context = settings["ssl_context"]
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert server.handshake(context, "localhost") == b"ok"
    assert server.clients == [((("commonName", "client"),),)]
    with pytest.raises(ssl.SSLCertVerificationError, match="match"):
        server.handshake(context, "broker.elsewhere.example")


def test_ssl_with_pkcs12_stores_and_no_host_name_check(ca: Authority, server: TlsServer) -> None:
    settings = kafka_python_security({
        "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": _jaas(PLAIN, "u", "p"),
        "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(ca.ca_p12),
        "ssl.truststore.password": P12_PASSWORD,
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(ca.client.p12),
        "ssl.keystore.password": P12_PASSWORD,
        "ssl.endpoint.identification.algorithm": "",
    })  # fmt: skip
    assert settings["sasl_plain_username"] == "u"
    context = settings["ssl_context"]
    assert not context.check_hostname
    assert server.handshake(context, "broker.elsewhere.example") == b"ok"  # name not checked
    assert server.clients == [((("commonName", "client"),),)]


def test_inline_pem_stores(ca: Authority, server: TlsServer) -> None:
    settings = kafka_python_security({
        "security.protocol": "SSL",
        "ssl.truststore.certificates": ca.ca.read_text(encoding="utf-8"),
        "ssl.keystore.certificate.chain": ca.client.cert.read_text(encoding="utf-8"),
        "ssl.keystore.key": ca.client.key.read_text(encoding="utf-8"),
    })  # fmt: skip
    assert server.handshake(settings["ssl_context"], "127.0.0.1") == b"ok"


def test_without_a_trust_store_the_broker_is_not_trusted(ca: Authority, server: TlsServer) -> None:
    context = kafka_python_security({"security.protocol": "SSL"})["ssl_context"]
    with pytest.raises(ssl.SSLCertVerificationError):  # the system's CAs do not know it
        server.handshake(context, "localhost")


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"security.protocol": "TLS"}, "security.protocol"),
        ({"security.protocol": "SASL_PLAINTEXT"}, "sasl.mechanism"),  # Kafka's GSSAPI default
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "sasl.mechanism"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
          "sasl.jaas.config": "com.example.TokenLoginModule required token=\"t\";"},
         "sasl.jaas.config"),
        ({"security.protocol": "SSL", "ssl.keystore.location": "/x/worker.jks"},
         "ssl.keystore.type"),  # Kafka's JKS default: Python cannot read it
        ({"security.protocol": "SSL", "ssl.truststore.location": "/x/ca.jks",
          "ssl.truststore.type": "JKS"}, "ssl.truststore.type"),
        ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"},
         "ssl.endpoint.identification.algorithm"),
    ],
)  # fmt: skip
def test_what_kafka_python_cannot_do_is_refused_naming_the_key(
    settings: dict[str, str], key: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        kafka_python_security(settings)
    assert refused.value.name == key
    assert "token=" not in str(refused.value)  # a JAAS line is never echoed
