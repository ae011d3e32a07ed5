"""librdkafka configurations for the producer, consumer and admin clients of a connector.

Pure functions from a worker configuration (and a connector's configuration) to the
``dict[str, str]`` that ``confluent_kafka.Producer``/``Consumer``/``AdminClient`` take. The
dicts hold strings only, so they pickle and JSON-encode (they travel to Spark executors).

Layers, later wins, exactly as Kafka Connect's ``Worker`` builds client configs:

1. sparkcat's tuned librdkafka defaults (:data:`PRODUCER_DEFAULTS`, :data:`CONSUMER_DEFAULTS`);
2. the framework's settings: ``bootstrap.servers`` and the client id; for producers
   ``acks=all``, ``max.in.flight.requests.per.connection=1``, ``enable.idempotence=false``,
   ``delivery.timeout.ms=2147483647``; for consumers ``group.id``,
   ``enable.auto.commit=false``, ``auto.offset.reset=earliest``;
3. the worker's ``producer.*`` / ``consumer.*`` / ``admin.*`` keys (prefix stripped); an
   admin client also inherits every unprefixed worker key (Kafka's backwards compatibility);
4. the connector's ``producer.override.*`` / ``consumer.override.*`` / ``admin.override.*``
   keys. Whether an override is *allowed* (``connector.client.config.override.policy``) is
   checked when the connector config is validated, not here.

Like Kafka, a user may override the framework's settings in layers 3 and 4, at the price of
Connect's delivery guarantees.

Every layer is translated from Kafka's Java-client spelling to librdkafka's: renamed keys
are mapped (``buffer.memory`` -> ``queue.buffering.max.kbytes``, ``fetch.max.wait.ms`` ->
``fetch.wait.max.ms``, ...), keys that only make sense in Java (serializers,
``max.block.ms``, metric reporters, ...) are dropped with a DEBUG log, and keys librdkafka
does not know are dropped with a WARNING -- Kafka's clients likewise ignore unknown keys,
where librdkafka would refuse to start.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from sparkcat.kafka._librdkafka import (
    ALIASES,
    CONSUMER_PROPERTIES,
    GLOBAL_PROPERTIES,
    PRODUCER_PROPERTIES,
    names,
)

__all__ = [
    "CONSUMER_DEFAULTS",
    "PRODUCER_DEFAULTS",
    "ClientKind",
    "admin_client_id",
    "admin_config",
    "consumer_client_id",
    "consumer_config",
    "consumer_group_id",
    "producer_client_id",
    "producer_config",
    "to_librdkafka",
]

log = logging.getLogger(__name__)

ClientKind = Literal["producer", "consumer", "admin"]

_INT_MAX = 2_147_483_647

#: Producer settings sparkcat chooses where nobody set anything.
PRODUCER_DEFAULTS: Mapping[str, str] = {
    # Kafka 4.0's Java default (and librdkafka 2.x's), pinned so that it cannot change under
    # us with a librdkafka upgrade: a few ms of latency buys full batches, which matter
    # because Connect allows only one in-flight request per connection.
    "linger.ms": "5",
    # 100,000 messages (librdkafka's default, pinned): enough for several poll() batches in
    # flight, and a bound that pushes back on a task that outruns the broker. What prevents
    # "Local: Queue full" is serving delivery reports (poll(0) every few thousand records:
    # 0 queue-full waits in a 600k-record burst, 6 without); a 5x larger queue removed the
    # waits too but measured no faster, only bigger.
    "queue.buffering.max.messages": "100000",
    # Java's buffer.memory (32 MiB) instead of librdkafka's 1 GiB: an executor hosts several
    # tasks, and against a slow broker each producer would otherwise buffer up to 1 GiB.
    "queue.buffering.max.kbytes": "32768",
    # batch.num.messages stays at librdkafka's 10,000: even at one request per 10 ms round
    # trip that is 1M records/s per partition, above what a Python task produces; 100,000
    # measured no difference (produce loop of 100 B records against tansu).
}

#: Consumer settings sparkcat chooses where nobody set anything.
CONSUMER_DEFAULTS: Mapping[str, str] = {
    # librdkafka waits 1 s before fetching again once its local queue crossed a threshold;
    # that caps a Python consume loop at ~200k records/s. 10 ms: ~1.5M records/s.
    "fetch.queue.backoff.ms": "10",
    # librdkafka prefetches up to 64 MiB per partition; a sink task reads a bounded range
    # per lease, and the excess is fetched and thrown away. 16 MiB per partition read as
    # fast as 64 MiB (~0.7-0.8M records/s of 100 B, tansu); 4 MiB was ~20% slower.
    "queued.max.messages.kbytes": "16384",
}

_PRODUCER_FRAMEWORK: Mapping[str, str] = {
    "acks": "all",
    "max.in.flight.requests.per.connection": "1",
    # Connect disables idempotence (for brokers without it / without the ACL).
    "enable.idempotence": "false",
    "delivery.timeout.ms": str(_INT_MAX),
}

_CONSUMER_FRAMEWORK: Mapping[str, str] = {
    "enable.auto.commit": "false",
    "auto.offset.reset": "earliest",
}

_KIND_PROPERTIES: Mapping[str, frozenset[str]] = {
    "producer": GLOBAL_PROPERTIES | PRODUCER_PROPERTIES,
    "consumer": GLOBAL_PROPERTIES | CONSUMER_PROPERTIES,
    "admin": GLOBAL_PROPERTIES,
}
_ALL_PROPERTIES = GLOBAL_PROPERTIES | PRODUCER_PROPERTIES | CONSUMER_PROPERTIES

# Java-client keys with no librdkafka counterpart, dropped quietly: librdkafka has no
# serializers, produce() never blocks (it raises BufferError), metrics go through
# statistics.interval.ms, and the JVM's TLS/SASL plumbing has no meaning here.
_JAVA_ONLY = names(
    """
key.serializer value.serializer key.deserializer value.deserializer max.block.ms
interceptor.classes metric.reporters metrics.num.samples metrics.sample.window.ms
metrics.recording.level auto.include.jmx.reporter partitioner.class partitioner.ignore.keys
partitioner.adaptive.partitioning.enable partitioner.availability.timeout.ms
metadata.max.idle.ms default.api.timeout.ms exclude.internal.topics security.providers
socket.connection.setup.timeout.max.ms internal.leave.group.on.close ssl.protocol
ssl.enabled.protocols ssl.keystore.type ssl.truststore.type ssl.truststore.password
ssl.keymanager.algorithm ssl.trustmanager.algorithm ssl.secure.random.implementation
ssl.engine.factory.class sasl.client.callback.handler.class sasl.login.class
sasl.login.callback.handler.class sasl.kerberos.ticket.renew.window.factor
sasl.kerberos.ticket.renew.jitter sasl.login.refresh.window.factor
sasl.login.refresh.window.jitter sasl.login.refresh.min.period.seconds
sasl.login.refresh.buffer.seconds sasl.login.connect.timeout.ms sasl.login.read.timeout.ms
sasl.login.retry.backoff.ms sasl.login.retry.backoff.max.ms
"""
)

_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "range": "range",
    "roundrobin": "roundrobin",
    "cooperative-sticky": "cooperative-sticky",
}
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def producer_client_id(connector: str, task: int) -> str:
    """Kafka Connect's source-task producer id: ``connector-producer-<conn>-<task>``."""
    return f"connector-producer-{connector}-{task}"


def consumer_client_id(connector: str, task: int) -> str:
    """Kafka Connect's sink-task consumer id: ``connector-consumer-<conn>-<task>``."""
    return f"connector-consumer-{connector}-{task}"


def admin_client_id(connector: str, task: int) -> str:
    """Kafka Connect's task admin-client id: ``connector-adminclient-<conn>-<task>``."""
    return f"connector-adminclient-{connector}-{task}"


def consumer_group_id(connector: str) -> str:
    """The consumer group of a sink connector: ``connect-<name>``."""
    return f"connect-{connector}"


def producer_config(
    worker: Mapping[str, Any],
    connector_overrides: Mapping[str, Any] | None = None,
    client_id: str | None = None,
) -> dict[str, str]:
    """The librdkafka config of a source task's (or the worker's) producer.

    ``connector_overrides`` is the connector's configuration: only its
    ``producer.override.*`` keys are read.
    """
    framework = {**_base(worker, client_id), **_PRODUCER_FRAMEWORK}
    return _layered(
        "producer", PRODUCER_DEFAULTS, framework, worker, connector_overrides, "producer."
    )


def consumer_config(
    worker: Mapping[str, Any],
    connector_overrides: Mapping[str, Any] | None = None,
    client_id: str | None = None,
    group_id: str | None = None,
) -> dict[str, str]:
    """The librdkafka config of a sink task's (or the worker's) consumer.

    ``group_id`` is normally :func:`consumer_group_id` of the connector; a
    ``consumer.override.group.id`` still wins, as in Kafka. Only ``consumer.override.*``
    keys of ``connector_overrides`` are read.
    """
    framework = {**_base(worker, client_id), **_CONSUMER_FRAMEWORK}
    if group_id is not None:
        framework["group.id"] = group_id
    return _layered(
        "consumer", CONSUMER_DEFAULTS, framework, worker, connector_overrides, "consumer."
    )


def admin_config(
    worker: Mapping[str, Any],
    connector_overrides: Mapping[str, Any] | None = None,
    client_id: str | None = None,
) -> dict[str, str]:
    """The librdkafka config of an admin client.

    Besides ``admin.*``, an admin client inherits the worker's unprefixed keys (not
    ``producer.*``/``consumer.*``), as in Kafka; the worker's own keys among them
    (``key.converter``, ``listeners``, ...) are dropped silently. Only
    ``admin.override.*`` keys of ``connector_overrides`` are read.
    """
    inherited = {
        key: value
        for key, value in worker.items()
        if not key.startswith(("admin.", "producer.", "consumer."))
    }
    framework = {
        **_base(worker, client_id),
        **to_librdkafka(_resolved(worker, inherited), "admin", quiet=True),
    }
    return _layered("admin", {}, framework, worker, connector_overrides, "admin.")


def _resolved(worker: Mapping[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """One layer of Kafka client settings with config-provider variables resolved
    (``${file:...}`` in ``sasl.jaas.config``, ``ssl.key.password``, ...) by the providers
    ``worker`` declares. Clients are built where they run, so this is the last moment (see
    :mod:`sparkcat.runtime.config_provider`); the dicts that travel hold the variables."""
    if not any(isinstance(v, str) and "${" in v for v in config.values()):
        return config
    from sparkcat.runtime.config_provider import resolve

    return {**config, **resolve(worker, {k: v for k, v in config.items() if isinstance(v, str)})}


def to_librdkafka(
    props: Mapping[str, Any], kind: ClientKind, *, quiet: bool = False
) -> dict[str, str]:
    """Translate one layer of Kafka client settings to librdkafka settings for ``kind``.

    Values become strings (``True`` -> ``"true"``). Keys of another client kind are
    dropped; unknown keys are dropped with a WARNING (DEBUG when ``quiet``).
    """
    out: dict[str, str] = {}
    allowed = _KIND_PROPERTIES[kind]
    for raw_key, raw_value in props.items():
        key, value = raw_key.strip(), _string(raw_value)
        translate = _TRANSLATIONS.get(key)
        pairs = translate(value, kind, props) if translate else [(ALIASES.get(key, key), value)]
        for name, setting in pairs:
            if name in allowed:
                out[name] = setting
            elif name in _ALL_PROPERTIES:
                log.debug("Ignoring %s: librdkafka's %s client has no such setting", key, kind)
            elif name in _JAVA_ONLY:
                log.debug("Ignoring %s: a Java-client setting librdkafka has no use for", key)
            else:
                level = logging.DEBUG if quiet else logging.WARNING
                log.log(level, "Ignoring %s for the %s: librdkafka does not know it", key, kind)
    return out


# -- internals ---------------------------------------------------------------------------


def _base(worker: Mapping[str, Any], client_id: str | None) -> dict[str, str]:
    servers = _string(worker.get("bootstrap.servers", "localhost:9092"))
    # librdkafka prints its INFO lines (e.g. BGQUEUE "Purging unserved events" when a client
    # is destroyed at shutdown) on stderr; Kafka's Java clients send theirs to the worker's
    # log file. Warnings and errors still reach the terminal.
    base = {"bootstrap.servers": _server_list(servers), "log_level": "4"}
    if client_id is not None:
        base["client.id"] = client_id
    return base


def _layered(
    kind: ClientKind,
    defaults: Mapping[str, str],
    framework: Mapping[str, str],
    worker: Mapping[str, Any],
    connector: Mapping[str, Any] | None,
    prefix: str,
) -> dict[str, str]:
    config = dict(defaults)
    config.update(framework)
    config.update(to_librdkafka(_resolved(worker, _with_prefix(worker, prefix)), kind))
    if connector:
        overrides = _with_prefix(connector, prefix[:-1] + ".override.")
        config.update(to_librdkafka(_resolved(worker, overrides), kind))
    return config


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _server_list(servers: str) -> str:
    return ",".join(s.strip() for s in servers.split(",") if s.strip())


def _string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_string(v) for v in value)
    return "" if value is None else str(value).strip()


def _clamped(value: str, low: int, high: int) -> str:
    try:
        number = int(value)
    except ValueError:
        return value  # librdkafka reports the bad value with its own message
    return str(max(low, min(high, number)))


_Pairs = list[tuple[str, str]]
_Translation = Callable[[str, str, Mapping[str, Any]], _Pairs]


def _renamed(name: str, low: int | None = None, high: int | None = None) -> _Translation:
    def translate(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
        if low is not None and high is not None:
            value = _clamped(value, low, high)
        return [(name, value)]

    return translate


def _buffer_memory(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    try:
        kbytes = max(1, (int(value) + 1023) // 1024)
    except ValueError:
        return [("queue.buffering.max.kbytes", value)]
    return [("queue.buffering.max.kbytes", str(kbytes))]


def _socket_buffer(name: str) -> _Translation:
    # Java: -1 = the OS default; librdkafka: 0 = the OS default.
    def translate(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
        return [(name, "0" if value == "-1" else value)]

    return translate


def _request_timeout(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    # librdkafka's request.timeout.ms is the producer's ack timeout (≤ 900 s); for other
    # clients the Java request timeout is librdkafka's socket.timeout.ms (≤ 300 s).
    if kind == "producer":
        return [("request.timeout.ms", _clamped(value, 1, 900_000))]
    return [("socket.timeout.ms", _clamped(value, 10, 300_000))]


def _auto_offset_reset(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    return [("auto.offset.reset", "error" if value.lower() == "none" else value.lower())]


def _assignment_strategy(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    names = [_ASSIGNORS.get(item.strip(), "") for item in value.split(",") if item.strip()]
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        log.warning("Ignoring partition.assignment.strategy=%s: no librdkafka assignor", value)
        return []
    # librdkafka refuses a mix of eager and cooperative assignors; keep the first's kind.
    cooperative = names[0] == "cooperative-sticky"
    kept = [n for n in names if (n == "cooperative-sticky") == cooperative]
    return [("partition.assignment.strategy", ",".join(kept))]


def _endpoint_identification(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    return [("ssl.endpoint.identification.algorithm", value.lower() or "none")]


def _truststore_location(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    if _string(props.get("ssl.truststore.type", "JKS")).upper() == "PEM":
        return [("ssl.ca.location", value)]
    log.warning(
        "Ignoring ssl.truststore.location: librdkafka reads PEM trust stores only; "
        "set ssl.truststore.type=PEM or ssl.ca.location"
    )
    return []


def _keystore_location(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    if _string(props.get("ssl.keystore.type", "")).upper() == "PEM":
        return [("ssl.certificate.location", value), ("ssl.key.location", value)]
    return [("ssl.keystore.location", value)]  # PKCS#12; librdkafka cannot read JKS


def jaas_login(value: str) -> dict[str, str] | None:
    """The ``username``/``password`` options of a PLAIN or SCRAM ``sasl.jaas.config`` line
    (those present); ``None`` for other login modules, which have no equivalent outside the
    JVM."""
    if "PlainLoginModule" not in value and "ScramLoginModule" not in value:
        return None
    options = {k: v.replace('\\"', '"') for k, v in _JAAS_OPTION.findall(value)}
    return {k: options[k] for k in ("username", "password") if k in options}


def _jaas_config(value: str, kind: str, props: Mapping[str, Any]) -> _Pairs:
    # PLAIN and SCRAM carry username/password in the JAAS line; librdkafka takes them as
    # sasl.username/sasl.password.
    login = jaas_login(value)
    if login is None:
        log.warning("Ignoring sasl.jaas.config: only PLAIN and SCRAM logins translate")
        return []
    return [(f"sasl.{k}", v) for k, v in login.items()]


_TRANSLATIONS: Mapping[str, _Translation] = {
    "bootstrap.servers": lambda value, kind, props: [("bootstrap.servers", _server_list(value))],
    "buffer.memory": _buffer_memory,
    "max.request.size": _renamed("message.max.bytes", 1000, 1_000_000_000),
    "delivery.timeout.ms": _renamed("delivery.timeout.ms", 0, _INT_MAX),
    "message.timeout.ms": _renamed("delivery.timeout.ms", 0, _INT_MAX),
    "fetch.max.wait.ms": _renamed("fetch.wait.max.ms", 0, 300_000),
    "send.buffer.bytes": _socket_buffer("socket.send.buffer.bytes"),
    "receive.buffer.bytes": _socket_buffer("socket.receive.buffer.bytes"),
    "request.timeout.ms": _request_timeout,
    "auto.offset.reset": _auto_offset_reset,
    "partition.assignment.strategy": _assignment_strategy,
    "ssl.endpoint.identification.algorithm": _endpoint_identification,
    "ssl.truststore.location": _truststore_location,
    "ssl.truststore.certificates": _renamed("ssl.ca.pem"),
    "ssl.keystore.location": _keystore_location,
    "ssl.keystore.key": _renamed("ssl.key.pem"),
    "ssl.keystore.certificate.chain": _renamed("ssl.certificate.pem"),
    "sasl.jaas.config": _jaas_config,
}
