"""Topics a source task writes to are created before their first record.

tansu (and a broker with ``auto.create.topics.enable``) would otherwise create them with its
own defaults. Settings come from the connector's ``topic.creation.*`` keys (Kafka's KIP-158).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from sparkcat.api.errors import ConnectError
from sparkcat.kafka import clients
from sparkcat.runtime.tasks import client_cache
from sparkcat.runtime.tasks.lease import LeaseSpec

__all__ = ["TopicCreator", "creation_settings"]

log = logging.getLogger(__name__)

_ADMIN_TIMEOUT_S = 30.0

_known_lock = threading.Lock()
_known_topics: dict[str, set[str]] = {}


class TopicCreator:
    """Creates topics before their first record: tansu (and a broker with
    ``auto.create.topics.enable``) would otherwise create them with its own defaults.

    Settings come from the connector's ``topic.creation.*`` keys (Kafka's KIP-158 groups
    with ``include``/``exclude`` regex lists, then ``default``); without them, 1 partition
    and the broker's default replication factor. Known topics are cached per process.
    """

    def __init__(self, spec: LeaseSpec) -> None:
        self.spec = spec
        servers = spec.worker_config.get("bootstrap.servers", "localhost:9092")
        with _known_lock:
            self.known = _known_topics.setdefault(servers, set())

    def ensure(self, topic: Any) -> None:
        if not isinstance(topic, str) or not topic:
            raise ConnectError(
                f"Source record has no valid topic ({topic!r}): a source task (or a "
                "transformation) must set the topic of every record"
            )
        admin = self._admin()
        existing = admin.list_topics(timeout=_ADMIN_TIMEOUT_S).topics
        if topic not in existing:
            self._create(admin, topic)
        self.known.add(topic)

    def _admin(self) -> AdminClient:
        spec = self.spec
        config = clients.admin_config(
            spec.worker_config,
            spec.connector_config,
            clients.admin_client_id(spec.connector, spec.task),
        )
        return client_cache.get_admin(config)

    def _create(self, admin: AdminClient, topic: str) -> None:
        partitions, replication, configs = creation_settings(self.spec.connector_config, topic)
        for rf in (replication, 1) if replication == -1 else (replication,):
            future = admin.create_topics(
                [NewTopic(topic, partitions, rf, config=configs)],
                request_timeout=_ADMIN_TIMEOUT_S,
            )[topic]
            try:
                future.result()
                log.info("Created topic %s (%d partitions, replication %d)", topic, partitions, rf)
                return
            except KafkaException as exc:
                code = exc.args[0].code()
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    return
                if code != KafkaError.INVALID_REPLICATION_FACTOR or rf == 1:
                    raise ConnectError(f"Failed to create topic {topic}: {exc}") from exc


def creation_settings(config: Mapping[str, str], topic: str) -> tuple[int, int, dict[str, str]]:
    groups = [g.strip() for g in config.get("topic.creation.groups", "").split(",") if g.strip()]
    chosen = "default"
    for group in groups:
        prefix = f"topic.creation.{group}."
        include = _patterns(config.get(prefix + "include", ""))
        exclude = _patterns(config.get(prefix + "exclude", ""))
        if any(p.fullmatch(topic) for p in include) and not any(
            p.fullmatch(topic) for p in exclude
        ):
            chosen = group
            break

    def setting(name: str) -> str | None:
        value = config.get(f"topic.creation.{chosen}.{name}")
        return value if value is not None else config.get(f"topic.creation.default.{name}")

    partitions = int(setting("partitions") or 1)
    replication = int(setting("replication.factor") or -1)
    reserved = {"partitions", "replication.factor", "include", "exclude"}
    topic_configs: dict[str, str] = {}
    for group in ("default", chosen):
        prefix = f"topic.creation.{group}."
        for key, value in config.items():
            name = key[len(prefix) :]
            if key.startswith(prefix) and name not in reserved:
                topic_configs[name] = value
    return (partitions if partitions > 0 else 1), replication, topic_configs


def _patterns(text: str) -> list[re.Pattern[str]]:
    return [re.compile(p.strip()) for p in text.split(",") if p.strip()]
