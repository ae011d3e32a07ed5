"""The definitions of Kafka's producer, consumer and admin client configs (the keys of
``ProducerConfig``, ``ConsumerConfig`` and ``AdminClientConfig``: name, type, default,
importance), as ConfigDefs.

Kafka Connect reports a connector's ``producer.override.*``, ``consumer.override.*`` and
``admin.override.*`` keys with these definitions: the value is parsed to the key's type and
rendered by it, so a ``PASSWORD`` key (``sasl.jaas.config``, ``ssl.key.password``, ...) shows
as ``[hidden]``. sparkcat's clients are librdkafka's, which take a few secrets under names of
their own (``sasl.password``, ``ssl.key.pem``, ...): they are defined here as ``PASSWORD``
too, so no secret given in an override is ever echoed. Any other key has no definition and is
shown as given.

Each table line is ``name TYPE default IMPORTANCE``; a default of ``-`` is ``null``, ``""`` the
empty string, ``!`` none (a required key); ``{c}`` stands for the consumer's package.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Literal

from sparkcat.api.config import NO_DEFAULT_VALUE, ConfigDef, ConfigType, Importance

ClientType = Literal["producer", "consumer", "admin"]

# Keys every Kafka client defines (CommonClientConfigs, SslConfigs, SaslConfigs).
_COMMON = """
bootstrap.servers LIST "" HIGH
client.dns.lookup STRING use_all_dns_ips MEDIUM
client.id STRING "" MEDIUM
metadata.max.age.ms LONG 300000 LOW
send.buffer.bytes INT 131072 MEDIUM
receive.buffer.bytes INT 65536 MEDIUM
reconnect.backoff.ms LONG 50 LOW
reconnect.backoff.max.ms LONG 1000 LOW
retry.backoff.ms LONG 100 LOW
retry.backoff.max.ms LONG 1000 LOW
enable.metrics.push BOOLEAN true LOW
request.timeout.ms INT 30000 MEDIUM
socket.connection.setup.timeout.ms LONG 10000 MEDIUM
socket.connection.setup.timeout.max.ms LONG 30000 MEDIUM
connections.max.idle.ms LONG 540000 MEDIUM
metrics.sample.window.ms LONG 30000 LOW
metrics.num.samples INT 2 LOW
metrics.recording.level STRING INFO LOW
metric.reporters LIST org.apache.kafka.common.metrics.JmxReporter LOW
security.providers STRING - LOW
security.protocol STRING PLAINTEXT MEDIUM
metadata.recovery.strategy STRING none LOW
ssl.protocol STRING TLSv1.3 MEDIUM
ssl.provider STRING - MEDIUM
ssl.cipher.suites LIST - LOW
ssl.enabled.protocols LIST TLSv1.2,TLSv1.3 MEDIUM
ssl.keystore.type STRING JKS MEDIUM
ssl.keystore.location STRING - HIGH
ssl.keystore.password PASSWORD - HIGH
ssl.key.password PASSWORD - HIGH
ssl.keystore.key PASSWORD - HIGH
ssl.keystore.certificate.chain PASSWORD - HIGH
ssl.truststore.certificates PASSWORD - HIGH
ssl.truststore.type STRING JKS MEDIUM
ssl.truststore.location STRING - HIGH
ssl.truststore.password PASSWORD - HIGH
ssl.keymanager.algorithm STRING SunX509 LOW
ssl.trustmanager.algorithm STRING PKIX LOW
ssl.endpoint.identification.algorithm STRING https LOW
ssl.secure.random.implementation STRING - LOW
ssl.engine.factory.class CLASS - LOW
sasl.kerberos.service.name STRING - MEDIUM
sasl.kerberos.kinit.cmd STRING /usr/bin/kinit LOW
sasl.kerberos.ticket.renew.window.factor DOUBLE 0.8 LOW
sasl.kerberos.ticket.renew.jitter DOUBLE 0.05 LOW
sasl.kerberos.min.time.before.relogin LONG 60000 LOW
sasl.login.refresh.window.factor DOUBLE 0.8 LOW
sasl.login.refresh.window.jitter DOUBLE 0.05 LOW
sasl.login.refresh.min.period.seconds SHORT 60 LOW
sasl.login.refresh.buffer.seconds SHORT 300 LOW
sasl.mechanism STRING GSSAPI MEDIUM
sasl.jaas.config PASSWORD - MEDIUM
sasl.client.callback.handler.class CLASS - MEDIUM
sasl.login.callback.handler.class CLASS - MEDIUM
sasl.login.class CLASS - MEDIUM
sasl.login.connect.timeout.ms INT - LOW
sasl.login.read.timeout.ms INT - LOW
sasl.login.retry.backoff.max.ms LONG 10000 LOW
sasl.login.retry.backoff.ms LONG 100 LOW
sasl.oauthbearer.scope.claim.name STRING scope LOW
sasl.oauthbearer.sub.claim.name STRING sub LOW
sasl.oauthbearer.token.endpoint.url STRING - MEDIUM
sasl.oauthbearer.jwks.endpoint.url STRING - MEDIUM
sasl.oauthbearer.jwks.endpoint.refresh.ms LONG 3600000 LOW
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms LONG 10000 LOW
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms LONG 100 LOW
sasl.oauthbearer.clock.skew.seconds INT 30 LOW
sasl.oauthbearer.expected.audience LIST - LOW
sasl.oauthbearer.expected.issuer STRING - LOW
sasl.oauthbearer.header.urlencode BOOLEAN false LOW
sasl.password PASSWORD - HIGH
sasl.oauthbearer.client.secret PASSWORD - HIGH
sasl.oauthbearer.client.credentials.client.secret PASSWORD - HIGH
sasl.oauthbearer.assertion.private.key.passphrase PASSWORD - HIGH
sasl.oauthbearer.assertion.private.key.pem PASSWORD - HIGH
ssl.key.pem PASSWORD - HIGH
"""

_PRODUCER = """
buffer.memory LONG 33554432 HIGH
retries INT 2147483647 HIGH
acks STRING all LOW
compression.type STRING none HIGH
compression.gzip.level INT -1 MEDIUM
compression.lz4.level INT 9 MEDIUM
compression.zstd.level INT 3 MEDIUM
batch.size INT 16384 MEDIUM
partitioner.adaptive.partitioning.enable BOOLEAN true LOW
partitioner.availability.timeout.ms LONG 0 LOW
partitioner.ignore.keys BOOLEAN false MEDIUM
linger.ms LONG 0 MEDIUM
delivery.timeout.ms INT 120000 MEDIUM
receive.buffer.bytes INT 32768 MEDIUM
max.request.size INT 1048576 MEDIUM
max.block.ms LONG 60000 MEDIUM
metadata.max.idle.ms LONG 300000 LOW
max.in.flight.requests.per.connection INT 5 LOW
key.serializer CLASS ! HIGH
value.serializer CLASS ! HIGH
partitioner.class CLASS - MEDIUM
interceptor.classes LIST "" LOW
enable.idempotence BOOLEAN true LOW
transaction.timeout.ms INT 60000 LOW
transactional.id STRING - LOW
"""

_CONSUMER = """
group.id STRING - HIGH
group.instance.id STRING - MEDIUM
session.timeout.ms INT 45000 HIGH
heartbeat.interval.ms INT 3000 HIGH
partition.assignment.strategy LIST {c}.RangeAssignor,{c}.CooperativeStickyAssignor MEDIUM
enable.auto.commit BOOLEAN true MEDIUM
auto.commit.interval.ms INT 5000 LOW
client.id STRING "" LOW
client.rack STRING "" LOW
max.partition.fetch.bytes INT 1048576 HIGH
fetch.min.bytes INT 1 HIGH
fetch.max.bytes INT 52428800 MEDIUM
fetch.max.wait.ms INT 500 LOW
auto.offset.reset STRING latest MEDIUM
check.crcs BOOLEAN true LOW
key.deserializer CLASS ! HIGH
value.deserializer CLASS ! HIGH
default.api.timeout.ms INT 60000 MEDIUM
interceptor.classes LIST "" LOW
max.poll.records INT 500 MEDIUM
max.poll.interval.ms INT 300000 MEDIUM
exclude.internal.topics BOOLEAN true MEDIUM
isolation.level STRING read_uncommitted MEDIUM
allow.auto.create.topics BOOLEAN true MEDIUM
group.protocol STRING classic HIGH
group.remote.assignor STRING - MEDIUM
"""

_ADMIN = """
enable.metrics.push BOOLEAN false LOW
connections.max.idle.ms LONG 300000 MEDIUM
retries INT 2147483647 LOW
default.api.timeout.ms INT 60000 MEDIUM
"""

_TABLES: dict[ClientType, tuple[str, str]] = {
    "producer": (_PRODUCER, "producerconfigs"),
    "consumer": (_CONSUMER, "consumerconfigs"),
    "admin": (_ADMIN, "adminclientconfigs"),
}


def _lines(table: str) -> Iterator[tuple[str, ConfigType, object, Importance]]:
    for line in table.strip().splitlines():
        name, type_name, default, importance = line.split()
        # {c} keeps the table's lines short.
        default = default.replace("{c}", "org.apache.kafka.clients.consumer")
        parsed: object = {"-": None, '""': "", "!": NO_DEFAULT_VALUE}.get(default, default)
        yield name, ConfigType[type_name], parsed, Importance[importance]


@cache
def client_config_def(client: ClientType) -> ConfigDef:
    """The ConfigDef of Kafka's ``client`` config (``ProducerConfig.configDef()`` ...)."""
    table, anchor = _TABLES[client]
    # A client's own line replaces the common one of the same name.
    keys = {line[0]: line for line in (*_lines(_COMMON), *_lines(table))}
    definition = ConfigDef()
    for name, type_, default, importance in keys.values():
        # CLASS defaults are all null or absent: Java class names are never loaded here.
        definition.define(
            name, type_, default, importance=importance,
            documentation=f"See https://kafka.apache.org/documentation/#{anchor}_{name}",
        )  # fmt: skip
    return definition


__all__ = ["ClientType", "client_config_def"]
