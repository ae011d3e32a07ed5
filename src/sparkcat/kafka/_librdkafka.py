"""What librdkafka (2.x, as bundled with confluent-kafka) accepts, per client kind.

Generated once from ``rd_kafka_conf_properties_show()`` of librdkafka 2.16 (callback and
pointer properties left out: they cannot come from a properties file). Kafka's Java clients
warn about and ignore keys they do not know; librdkafka refuses them, so the translation in
:mod:`sparkcat.kafka.clients` needs this list to behave like Kafka.
"""

from __future__ import annotations


def names(text: str) -> frozenset[str]:
    """The whitespace-separated names in ``text``."""
    return frozenset(text.split())


GLOBAL_PROPERTIES = names(
    """
allow.auto.create.topics api.version.fallback.ms api.version.request
api.version.request.timeout.ms bootstrap.servers broker.address.family broker.address.ttl
broker.version.fallback builtin.features client.dns.lookup client.id client.rack
connections.max.idle.ms debug enable.metrics.push enable.random.seed
enable.sasl.oauthbearer.unsecure.jwt enable.ssl.certificate.verification https.ca.location
https.ca.pem interceptors internal.termination.signal log.connection.close log.queue
log.thread.name max.in.flight max.in.flight.requests.per.connection message.copy.max.bytes
message.max.bytes metadata.broker.list metadata.max.age.ms
metadata.recovery.rebootstrap.trigger.ms metadata.recovery.strategy plugin.library.paths
receive.message.max.bytes reconnect.backoff.jitter.ms reconnect.backoff.max.ms
reconnect.backoff.ms retry.backoff.max.ms retry.backoff.ms sasl.kerberos.keytab
sasl.kerberos.kinit.cmd sasl.kerberos.min.time.before.relogin sasl.kerberos.principal
sasl.kerberos.service.name sasl.mechanism sasl.mechanisms
sasl.oauthbearer.assertion.algorithm sasl.oauthbearer.assertion.claim.aud
sasl.oauthbearer.assertion.claim.exp.seconds sasl.oauthbearer.assertion.claim.iss
sasl.oauthbearer.assertion.claim.jti.include sasl.oauthbearer.assertion.claim.nbf.seconds
sasl.oauthbearer.assertion.claim.sub sasl.oauthbearer.assertion.file
sasl.oauthbearer.assertion.jwt.template.file sasl.oauthbearer.assertion.private.key.file
sasl.oauthbearer.assertion.private.key.passphrase sasl.oauthbearer.assertion.private.key.pem
sasl.oauthbearer.client.credentials.client.id
sasl.oauthbearer.client.credentials.client.secret sasl.oauthbearer.client.id
sasl.oauthbearer.client.secret sasl.oauthbearer.config sasl.oauthbearer.extensions
sasl.oauthbearer.grant.type sasl.oauthbearer.metadata.authentication.type
sasl.oauthbearer.method sasl.oauthbearer.scope sasl.oauthbearer.sub.claim.name
sasl.oauthbearer.token.endpoint.url sasl.password sasl.username security.protocol
socket.blocking.max.ms socket.connection.setup.timeout.ms socket.keepalive.enable
socket.max.fails socket.nagle.disable socket.receive.buffer.bytes socket.send.buffer.bytes
socket.timeout.ms ssl.ca.certificate.stores ssl.ca.location ssl.ca.pem
ssl.certificate.location ssl.certificate.pem ssl.cipher.suites ssl.crl.location
ssl.curves.list ssl.endpoint.identification.algorithm ssl.engine.id ssl.engine.location
ssl.key.location ssl.key.password ssl.key.pem ssl.keystore.location ssl.keystore.password
ssl.providers ssl.sigalgs.list statistics.interval.ms topic.blacklist
topic.metadata.propagation.max.ms topic.metadata.refresh.fast.cnt
topic.metadata.refresh.fast.interval.ms topic.metadata.refresh.interval.ms
topic.metadata.refresh.sparse
"""
)

PRODUCER_PROPERTIES = names(
    """
acks batch.num.messages batch.size compression.codec compression.level compression.type
delivery.report.only.error delivery.timeout.ms enable.gapless.guarantee enable.idempotence
linger.ms message.send.max.retries message.timeout.ms partitioner produce.offset.report
queue.buffering.backpressure.threshold queue.buffering.max.kbytes
queue.buffering.max.messages queue.buffering.max.ms queuing.strategy request.required.acks
request.timeout.ms retries sticky.partitioning.linger.ms transaction.timeout.ms
transactional.id
"""
)

CONSUMER_PROPERTIES = names(
    """
auto.commit.enable auto.commit.interval.ms auto.offset.reset check.crcs
consume.callback.max.messages coordinator.query.interval.ms enable.auto.commit
enable.auto.offset.store enable.partition.eof fetch.error.backoff.ms fetch.max.bytes
fetch.message.max.bytes fetch.min.bytes fetch.queue.backoff.ms fetch.wait.max.ms group.id
group.instance.id group.protocol group.protocol.type group.remote.assignor
heartbeat.interval.ms isolation.level max.partition.fetch.bytes max.poll.interval.ms
max.poll.records offset.store.method offset.store.path offset.store.sync.interval.ms
partition.assignment.strategy queued.max.messages.kbytes queued.min.messages
session.timeout.ms share.acknowledgement.mode
"""
)

# librdkafka spells some settings two ways; one spelling is kept (Kafka's where it has one)
# so that a later layer's setting replaces an earlier layer's under either name.
ALIASES = {
    "metadata.broker.list": "bootstrap.servers",
    "max.in.flight": "max.in.flight.requests.per.connection",
    "sasl.mechanisms": "sasl.mechanism",
    "sasl.oauthbearer.client.id": "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.secret": "sasl.oauthbearer.client.credentials.client.secret",
    "fetch.message.max.bytes": "max.partition.fetch.bytes",
    "queue.buffering.max.ms": "linger.ms",
    "message.send.max.retries": "retries",
    "compression.codec": "compression.type",
    "request.required.acks": "acks",
    "message.timeout.ms": "delivery.timeout.ms",
    "auto.commit.enable": "enable.auto.commit",
}
