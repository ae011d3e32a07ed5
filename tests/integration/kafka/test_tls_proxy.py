"""``security.protocol=SSL`` end to end, for librdkafka and for kafka-python (the distributed
group membership), against a broker reachable only over TLS.

tansu cannot listen on TLS (docs/security.md), so a small TLS-terminating proxy (Python
``ssl`` + sockets, the test CA of tests/support/tls.py) stands in front of a tansu of this
test's own whose *advertised* address is the proxy's: every connection a client makes —
bootstrap, partition leader, group coordinator — goes through TLS. The clients get Kafka's
keys (``ssl.truststore.*``, ``ssl.keystore.*``) through sparkcat's mappings.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from tests.support.membership import IgnoreRebalances
from tests.support.ports import free_port
from tests.support.tls import P12_PASSWORD, Authority, make_ca, mutual_tls_server_context

from sparkcat.kafka import clients
from sparkcat.kafka.broker import find_tansu_binary
from sparkcat.runtime.distributed.assignor import ClusterConfigSnapshot
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.membership import WorkerGroupMember

pytestmark = pytest.mark.broker


class TlsProxy:
    """Accepts TLS on 127.0.0.1 (server certificate of the test CA; client certificates
    required) and pipes the plaintext to ``target`` port; counts completed handshakes."""

    def __init__(self, ca: Authority) -> None:
        self.context = mutual_tls_server_context(ca)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.target: int | None = None
        self.handshakes = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            tls = self.context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()
            return
        self.handshakes += 1
        assert self.target is not None
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target))
        except OSError:
            tls.close()
            return
        threading.Thread(target=_pump, args=(upstream, tls), daemon=True).start()
        _pump(tls, upstream)

    def close(self) -> None:
        self.sock.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.close()
            except OSError:
                pass


@dataclass
class TlsBroker:
    servers: str
    proxy: TlsProxy
    ca: Authority

    def ssl_keys(self, prefix: str = "") -> dict[str, str]:
        """Kafka's client keys for this broker: PEM trust store, PKCS12 key store."""
        keys = {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca.ca),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(self.ca.client.p12),
            "ssl.keystore.password": P12_PASSWORD,
        }
        return {prefix + k: v for k, v in keys.items()}


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsBroker]:
    directory = tmp_path_factory.mktemp("tls")
    ca = make_ca(directory)
    proxy = TlsProxy(ca)
    port = free_port()
    proxy.target = port
    with open(directory / "tansu.log", "wb") as out:
        process = subprocess.Popen(
            [str(find_tansu_binary()), "broker",
             "--listener-url", f"tcp://127.0.0.1:{port}",
             "--advertised-listener-url", f"tcp://127.0.0.1:{proxy.port}",
             "--cluster-id", "sparkcat-tls", "--storage-engine", "memory://tansu/"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, (directory / "tansu.log").read_text()
                assert time.monotonic() < deadline, "tansu did not listen"
                time.sleep(0.05)
        yield TlsBroker(f"127.0.0.1:{proxy.port}", proxy, ca)
    finally:
        process.terminate()
        process.wait(10)
        proxy.close()


def test_librdkafka_produces_and_consumes_over_tls(tls_broker: TlsBroker) -> None:
    worker = {
        "bootstrap.servers": tls_broker.servers,
        **tls_broker.ssl_keys("producer."),
        **tls_broker.ssl_keys("consumer."),
    }
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    producer = Producer(clients.producer_config(worker, None, "tls-producer"))
    for i in range(10):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer(clients.consumer_config(worker, None, "tls-consumer", f"g-{topic}"))
    try:
        partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < 10 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value() or b"")
        assert sorted(values) == sorted(f"v{i}".encode() for i in range(10))
    finally:
        consumer.close()
    assert tls_broker.proxy.handshakes >= 2


def test_the_group_membership_joins_over_tls(tls_broker: TlsBroker) -> None:
    config = DistributedConfig({
        "bootstrap.servers": tls_broker.servers, "group.id": f"tls-{uuid.uuid4().hex[:8]}",
        "key.converter": "JsonConverter", "value.converter": "JsonConverter",
        "config.storage.topic": "c", "offset.storage.topic": "o",
        "status.storage.topic": "s", "session.timeout.ms": "4000",
        "heartbeat.interval.ms": "1000", "rebalance.timeout.ms": "20000",
        **tls_broker.ssl_keys(),
    })  # fmt: skip
    before = tls_broker.proxy.handshakes
    member = WorkerGroupMember(
        config, "http://w:8083/", lambda: ClusterConfigSnapshot(0), IgnoreRebalances()
    )
    member.start()
    try:
        deadline = time.monotonic() + 60
        while member.assignment is None and time.monotonic() < deadline:
            member.poll(1.0)
        assert member.assignment is not None and member.is_leader
        assert member.generation_id >= 0
    finally:
        member.stop()
    assert tls_broker.proxy.handshakes > before
