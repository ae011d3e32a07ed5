"""The MirrorMaker connectors' own clients of the source and target clusters.

Client settings are resolved as Kafka's ``MirrorConnectorConfig`` does: the cluster's
connection settings (``source.cluster.``/``target.cluster.`` + ``bootstrap.servers``,
``security.protocol``, ``ssl.*``, ``sasl.*``), then ``consumer.``/``producer.``/``admin.``
keys, then ``source.consumer.`` etc.; consumers get ``enable.auto.commit=false`` and
``auto.offset.reset=earliest`` unless set. The result is given to librdkafka: Java-only keys
are dropped and ``sasl.jaas.config`` (PLAIN/SCRAM) becomes ``sasl.username``/``sasl.password``;
a key librdkafka still refuses is dropped with a warning, as Kafka's clients ignore unknown
keys. Every client's ``client.id`` is ``<source>-><target>|<connector>|<role>`` as in Kafka.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from sparkcat.api.errors import ConnectError

log = logging.getLogger(__name__)

Side = Literal["source", "target"]
Kind = Literal["consumer", "producer", "admin"]

_CLUSTER_KEYS = ("bootstrap.servers", "security.protocol")
_CLUSTER_PREFIXES = ("ssl.", "sasl.")
_JAVA_ONLY = re.compile(
    r".*(de)?serializer$|interceptor\.classes|metric\.reporters|metrics\..*|"
    r"ssl\.(keystore|truststore)\.type|ssl\.(protocol|enabled\.protocols|provider)|"
    r"ssl\.(trustmanager|keymanager)\.algorithm|ssl\.secure\.random\.implementation|"
    r"ssl\.engine\.factory\.class|sasl\.login\..*|sasl\.client\.callback\.handler\.class|"
    r"sasl\.jaas\.config|max\.block\.ms|poll\.timeout\.ms|partition\.assignment\.strategy|"
    r"default\.api\.timeout\.ms"
)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_UNKNOWN = re.compile(r'No such configuration property: "([^"]+)"')
_READ_BATCH = 10_000


def client_config(
    props: Mapping[str, str], side: Side, kind: Kind, client_id: str
) -> dict[str, str]:
    """librdkafka settings for a ``kind`` client of the ``side`` cluster."""
    cluster_prefix = f"{side}.cluster."
    conf = {
        key[len(cluster_prefix) :]: value
        for key, value in props.items()
        if key.startswith(cluster_prefix)
    }
    conf = {k: v for k, v in conf.items() if k in _CLUSTER_KEYS or k.startswith(_CLUSTER_PREFIXES)}
    for prefix in (f"{kind}.", f"{side}.{kind}."):
        conf.update({k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)})
    if kind == "consumer":
        conf["enable.auto.commit"] = "false"
        conf.setdefault("auto.offset.reset", "earliest")
        # librdkafka's 1 s default backoff caps a Python consumer far below the broker.
        conf.setdefault("fetch.queue.backoff.ms", "10")
    user_id = conf.get("client.id")
    conf["client.id"] = f"{user_id}|{client_id}" if user_id else client_id
    return to_librdkafka(conf)


def to_librdkafka(conf: Mapping[str, str]) -> dict[str, str]:
    """``conf`` without Java-only keys, with JAAS credentials spelled librdkafka's way."""
    out = {k: str(v) for k, v in conf.items() if not _JAVA_ONLY.fullmatch(k)}
    jaas = conf.get("sasl.jaas.config")
    if jaas:
        options = dict(_JAAS_OPTION.findall(jaas))
        if "username" in options:
            out.setdefault("sasl.username", options["username"])
        if "password" in options:
            out.setdefault("sasl.password", options["password"])
    return out


def _create(factory: Callable[[dict[str, Any]], Any], settings: dict[str, str]) -> Any:
    conf: dict[str, Any] = dict(settings)
    while True:
        try:
            return factory(conf)
        except KafkaException as exc:
            unknown = _UNKNOWN.search(str(exc))
            if unknown is None or unknown.group(1) not in conf:
                raise
            log.warning("Ignoring client setting %s: librdkafka does not know it", unknown[1])
            del conf[unknown.group(1)]


def new_admin(conf: dict[str, str]) -> Any:
    return _create(AdminClient, conf)


def new_producer(conf: dict[str, str]) -> Any:
    return _create(Producer, conf)


def new_consumer(conf: dict[str, str]) -> Any:
    # assign() only: the id is never used to join a group, but librdkafka wants one.
    return _create(Consumer, {"group.id": conf.get("client.id", "mm2"), **conf})


def topic_partitions(admin: AdminClient, timeout_s: float) -> dict[str, int]:
    """Every topic of the cluster with its partition count."""
    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise ConnectError(f"Could not list topics: {exc}") from exc
    return {
        name: len(topic.partitions)
        for name, topic in metadata.topics.items()
        if topic.error is None and topic.partitions
    }


def create_topics(admin: AdminClient, topics: Iterable[NewTopic], timeout_s: float) -> list[str]:
    """Create ``topics``; those that exist already are fine. Returns the names created."""
    new = list(topics)
    if not new:
        return []
    created = []
    for name, future in admin.create_topics(new, request_timeout=timeout_s).items():
        try:
            future.result(timeout=timeout_s)
            created.append(name)
            log.info("Created topic '%s'", name)
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                continue
            raise ConnectError(f"Error while attempting to create/find topic '{name}'") from exc
    return created


def create_compacted_topic(
    admin: AdminClient, name: str, replication: int, timeout_s: float
) -> None:
    """Kafka's ``createSinglePartitionCompactedTopic``."""
    topic = NewTopic(name, 1, replication, config={"cleanup.policy": "compact"})
    create_topics(admin, [topic], timeout_s)


def topic_configs(
    admin: AdminClient, topics: Iterable[str], keep: Callable[[str], bool], timeout_s: float
) -> dict[str, dict[str, str]]:
    """The explicitly set, writable, non-sensitive configs of ``topics`` accepted by ``keep``;
    ``{}`` for a topic whose configs cannot be described."""
    resources = [ConfigResource(ResourceType.TOPIC, topic) for topic in topics]
    if not resources:
        return {}
    result: dict[str, dict[str, str]] = {}
    for resource, future in admin.describe_configs(resources, request_timeout=timeout_s).items():
        try:
            entries = future.result(timeout=timeout_s)
        except KafkaException as exc:
            log.warning("Could not describe the configs of topic %s: %s", resource.name, exc)
            result[resource.name] = {}
            continue
        result[resource.name] = {
            name: entry.value
            for name, entry in entries.items()
            if not entry.is_default
            and not entry.is_read_only
            and not entry.is_sensitive
            and entry.value is not None
            and keep(name)
        }
    return result


def read_partition(
    conf: dict[str, str], topic: str, timeout_s: float, partition: int = 0
) -> list[Any]:
    """Every message of ``topic``'s ``partition``, read to the end that the fetch responses
    report (list offsets is not trusted: some brokers answer it wrongly)."""
    consumer = new_consumer({"fetch.wait.max.ms": "10", **conf, "enable.partition.eof": "true"})
    messages: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        consumer.assign([TopicPartition(topic, partition, -2)])  # -2: the beginning
        while time.monotonic() < deadline:
            batch = consumer.consume(_READ_BATCH, timeout=0.05)
            for message in batch:
                error = message.error()
                if error is None:
                    messages.append(message)
                elif error.code() == KafkaError._PARTITION_EOF:
                    return messages
                elif error.code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise ConnectError(f"Could not read {topic}: {error}")
    finally:
        consumer.close()
    raise ConnectError(f"Timed out reading {topic} to its end after {timeout_s:.0f} s")


__all__ = [
    "client_config",
    "create_compacted_topic",
    "create_topics",
    "new_admin",
    "new_consumer",
    "new_producer",
    "read_partition",
    "to_librdkafka",
    "topic_configs",
    "topic_partitions",
]
