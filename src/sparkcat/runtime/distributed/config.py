"""The distributed worker config: Kafka's ``DistributedConfig``.

:func:`distributed_config_def` is :func:`~sparkcat.runtime.worker_config.base_config_def`
(the keys both modes share, including ``rest.advertised.host.name|port|listener`` and
``offset.flush.interval.ms``) plus Kafka's distributed keys with Kafka's types, defaults,
validators and messages:

- ``group.id``, ``config.storage.topic``, ``offset.storage.topic``,
  ``status.storage.topic`` — required;
- ``*.storage.replication.factor`` (default 3; positive or -1),
  ``offset.storage.partitions`` (25) and ``status.storage.partitions`` (5) (positive or -1);
- ``session.timeout.ms`` 10000, ``heartbeat.interval.ms`` 3000, ``rebalance.timeout.ms``
  60000, ``scheduled.rebalance.max.delay.ms`` 300000, ``worker.sync.timeout.ms`` 3000,
  ``worker.unsync.backoff.ms`` 300000;
- ``connect.protocol`` ``eager|compatible|sessioned`` (default ``sessioned``);
- ``inter.worker.key.generation.algorithm`` / ``inter.worker.signature.algorithm``
  (HmacSHA256), ``inter.worker.key.size`` (none: the algorithm's default),
  ``inter.worker.key.ttl.ms`` (3600000), ``inter.worker.verification.algorithms``
  ([HmacSHA256]; must contain the signature algorithm);
- ``exactly.once.source.support`` ``disabled|preparing|enabled``;
- Kafka's common client keys (``client.id``, ``request.timeout.ms`` 40000,
  ``retry.backoff.ms``, ``metadata.max.age.ms``, ``security.protocol``, ...).

Errors raise :class:`~sparkcat.api.errors.ConfigError` whose ``str`` is one line, in
Kafka's words (the CLI prints it and exits 2).

Public API: :class:`DistributedConfig` (a :class:`WorkerConfig`) with typed accessors the
herder uses (``group_id``, ``connect_protocol``, ``config_topic``...), the key constants,
and :func:`distributed_config_def`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    ValidString,
)
from sparkcat.api.errors import ConfigError
from sparkcat.runtime.distributed.protocol import ConnectProtocolCompatibility
from sparkcat.runtime.distributed.signing import (
    key_generator_algorithms,
    key_length,
    mac_algorithms,
)
from sparkcat.runtime.worker_config import (
    BOOTSTRAP_SERVERS_CONFIG,
    EMBEDDED_BROKER_DEFAULTS,
    WorkerConfig,
    base_config_def,
)

GROUP_ID_CONFIG = "group.id"
SESSION_TIMEOUT_MS_CONFIG = "session.timeout.ms"
HEARTBEAT_INTERVAL_MS_CONFIG = "heartbeat.interval.ms"
REBALANCE_TIMEOUT_MS_CONFIG = "rebalance.timeout.ms"
WORKER_SYNC_TIMEOUT_MS_CONFIG = "worker.sync.timeout.ms"
WORKER_UNSYNC_BACKOFF_MS_CONFIG = "worker.unsync.backoff.ms"
CONFIG_TOPIC_CONFIG = "config.storage.topic"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"
OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"
STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"
CONNECT_PROTOCOL_CONFIG = "connect.protocol"
CONNECT_PROTOCOL_DEFAULT = "sessioned"
SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG = "scheduled.rebalance.max.delay.ms"
SCHEDULED_REBALANCE_MAX_DELAY_MS_DEFAULT = 300_000
INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG = "inter.worker.key.generation.algorithm"
INTER_WORKER_KEY_SIZE_CONFIG = "inter.worker.key.size"
INTER_WORKER_KEY_TTL_MS_CONFIG = "inter.worker.key.ttl.ms"
INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG = "inter.worker.signature.algorithm"
INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG = "inter.worker.verification.algorithms"
INTER_WORKER_ALGORITHM_DEFAULT = "HmacSHA256"
EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG = "exactly.once.source.support"
EXACTLY_ONCE_SOURCE_SUPPORT_VALUES = ("disabled", "preparing", "enabled")
REST_ADVERTISED_HOST_NAME_CONFIG = "rest.advertised.host.name"
REST_ADVERTISED_PORT_CONFIG = "rest.advertised.port"
REST_ADVERTISED_LISTENER_CONFIG = "rest.advertised.listener"
CONFIG_STORAGE_PREFIX = "config.storage."
OFFSET_STORAGE_PREFIX = "offset.storage."
STATUS_STORAGE_PREFIX = "status.storage."
_INT_MAX = 2**31 - 1


def _check_partitions(name: str, value: Any) -> None:
    if value != -1 and value < 1:
        raise ConfigError(
            name, value, "Number of partitions must be positive, or -1 to use the broker's default"
        )


def _check_replication_factor(name: str, value: Any) -> None:
    if value != -1 and value < 1:
        raise ConfigError(
            name,
            value,
            "Replication factor must be positive and not larger than the number of brokers in "
            "the Kafka cluster, or -1 to use the broker's default",
        )


def _check_protocol(name: str, value: Any) -> None:
    try:
        ConnectProtocolCompatibility.from_config(str(value))
    except ValueError:
        raise ConfigError(name, value, "Invalid Connect protocol compatibility") from None


def _unsupported(name: str, value: Any, supported: tuple[str, ...]) -> ConfigError:
    return ConfigError(
        name,
        value,
        "the algorithm is not supported by this worker; the supported algorithms are: "
        + ", ".join(supported),
    )


def _check_key_algorithm(name: str, value: Any) -> None:
    if value not in key_generator_algorithms():
        raise _unsupported(name, value, key_generator_algorithms())


def _check_mac_algorithm(name: str, value: Any) -> None:
    if value not in mac_algorithms():
        raise _unsupported(name, value, mac_algorithms())


def _check_verification_algorithms(name: str, value: Any) -> None:
    if not value:
        raise ConfigError(
            name, value, "At least one signature verification algorithm must be provided"
        )
    for algorithm in value:
        _check_mac_algorithm(name, algorithm)


_PARTITIONS = LambdaValidator.with_(
    _check_partitions, "Positive number, or -1 to use the broker's default"
)
_REPLICATION_FACTOR = LambdaValidator.with_(
    _check_replication_factor,
    "Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use "
    "the broker's default",
)


def _define_group_keys(d: ConfigDef) -> ConfigDef:
    t, imp = ConfigType, Importance
    return (
        d.define(GROUP_ID_CONFIG, t.STRING, importance=imp.HIGH, documentation=(
                 "A unique string that identifies the Connect cluster group this worker "
                 "belongs to."))
        .define(SESSION_TIMEOUT_MS_CONFIG, t.INT, 10_000, None, imp.HIGH,
                "Timeout used to detect worker failures.")
        .define(REBALANCE_TIMEOUT_MS_CONFIG, t.INT, 60_000, None, imp.HIGH,
                "Longest time each worker may take to join the group once a rebalance began.")
        .define(HEARTBEAT_INTERVAL_MS_CONFIG, t.INT, 3_000, None, imp.HIGH,
                "Expected time between heartbeats to the group coordinator.")
        .define(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG, t.STRING, "disabled",
                ValidString.in_(*EXACTLY_ONCE_SOURCE_SUPPORT_VALUES), imp.HIGH,
                "Whether to enable exactly-once support for source connectors in the cluster.")
        .define(WORKER_SYNC_TIMEOUT_MS_CONFIG, t.INT, 3_000, None, imp.MEDIUM,
                "How long to wait to catch up with the config topic before leaving the group.")
        .define(WORKER_UNSYNC_BACKOFF_MS_CONFIG, t.INT, 300_000, None, imp.MEDIUM,
                "How long to wait before rejoining after failing to catch up.")
        .define(CONNECT_PROTOCOL_CONFIG, t.STRING, CONNECT_PROTOCOL_DEFAULT,
                LambdaValidator.with_(_check_protocol, "[eager, compatible, sessioned]"),
                imp.LOW, "Compatibility mode for Kafka Connect Protocol.")
        .define(SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG, t.INT,
                SCHEDULED_REBALANCE_MAX_DELAY_MS_DEFAULT, Range.between(0, _INT_MAX), imp.LOW,
                "How long to wait for a departed worker to return before reassigning its work.")
    )  # fmt: skip


def _define_storage_keys(d: ConfigDef) -> ConfigDef:
    t, imp = ConfigType, Importance
    for prefix, partitions in (
        (OFFSET_STORAGE_PREFIX, 25),
        (CONFIG_STORAGE_PREFIX, None),
        (STATUS_STORAGE_PREFIX, 5),
    ):
        kind = prefix.split(".")[0]
        d.define(
            f"{prefix}topic",
            t.STRING,
            importance=imp.HIGH,
            documentation=f"The name of the Kafka topic where {kind}s are stored.",
        )
        if partitions is not None:
            d.define(
                f"{prefix}partitions",
                t.INT,
                partitions,
                _PARTITIONS,
                imp.LOW,
                f"Number of partitions of the {kind} storage topic when it is created.",
            )
        d.define(f"{prefix}replication.factor", t.SHORT, 3, _REPLICATION_FACTOR, imp.LOW,
                 f"Replication factor of the {kind} storage topic when it is created.")  # fmt: skip
    return d


def _define_key_configs(d: ConfigDef) -> ConfigDef:
    t, imp = ConfigType, Importance
    return (
        d.define(INTER_WORKER_KEY_TTL_MS_CONFIG, t.INT, 3_600_000, Range.between(0, _INT_MAX),
                 imp.LOW, "The TTL of generated session keys used for internal request "
                 "validation, in ms.")
        .define(INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG, t.STRING,
                INTER_WORKER_ALGORITHM_DEFAULT,
                LambdaValidator.with_(_check_key_algorithm,
                                      "Any KeyGenerator algorithm supported by the worker"),
                imp.LOW, "The algorithm used to generate session keys.")
        .define(INTER_WORKER_KEY_SIZE_CONFIG, t.INT, None, None, imp.LOW,
                "Size of session keys in bits (unset: the algorithm's default).")
        .define(INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG, t.STRING,
                INTER_WORKER_ALGORITHM_DEFAULT,
                LambdaValidator.with_(_check_mac_algorithm,
                                      "Any MAC algorithm supported by the worker"),
                imp.LOW, "The algorithm used to sign internal requests.")
        .define(INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG, t.LIST,
                [INTER_WORKER_ALGORITHM_DEFAULT],
                LambdaValidator.with_(_check_verification_algorithms,
                                      "A list of one or more MAC algorithms, each supported by "
                                      "the worker"),
                imp.LOW, "Algorithms permitted to verify internal requests.")
    )  # fmt: skip


def _define_client_keys(d: ConfigDef) -> ConfigDef:
    t, imp = ConfigType, Importance
    return (
        d.define("metadata.max.age.ms", t.LONG, 300_000, Range.at_least(0), imp.LOW,
                 "Period after which metadata is refreshed.")
        .define("client.id", t.STRING, "", None, imp.LOW, "Id passed to the server.")
        .define("send.buffer.bytes", t.INT, 128 * 1024, Range.at_least(-1), imp.MEDIUM,
                "TCP send buffer size.")
        .define("receive.buffer.bytes", t.INT, 32 * 1024, Range.at_least(-1), imp.MEDIUM,
                "TCP receive buffer size.")
        .define("reconnect.backoff.ms", t.LONG, 50, Range.at_least(0), imp.LOW,
                "Base wait before reconnecting.")
        .define("reconnect.backoff.max.ms", t.LONG, 1000, Range.at_least(0), imp.LOW,
                "Longest wait before reconnecting.")
        .define("retry.backoff.ms", t.LONG, 100, Range.at_least(0), imp.LOW,
                "Wait before retrying a failed request.")
        .define("retry.backoff.max.ms", t.LONG, 1000, Range.at_least(0), imp.LOW,
                "Longest wait before retrying a failed request.")
        .define("request.timeout.ms", t.INT, 40_000, Range.at_least(0), imp.MEDIUM,
                "Longest wait for the response of a request.")
        .define("connections.max.idle.ms", t.LONG, 540_000, None, imp.MEDIUM,
                "Close idle connections after this many ms.")
        .define("metadata.recovery.strategy", t.STRING, "none",
                CaseInsensitiveValidString.in_("NONE", "REBOOTSTRAP"), imp.LOW,
                "What clients do when no known broker is reachable (none | rebootstrap).")
        .define("security.protocol", t.STRING, "PLAINTEXT",
                ValidString.in_("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
                imp.MEDIUM, "Protocol used to communicate with brokers.")
    )  # fmt: skip


def distributed_config_def() -> ConfigDef:
    """The ConfigDef of a distributed worker (Kafka's ``DistributedConfig.config``)."""
    d = base_config_def()
    for define in (_define_group_keys, _define_storage_keys, _define_key_configs,
                   _define_client_keys):  # fmt: skip
        d = define(d)
    return d


class DistributedConfig(WorkerConfig):
    """A parsed distributed worker config. Raises :class:`ConfigError` when invalid."""

    def __init__(self, props: Mapping[str, Any], definition: ConfigDef | None = None) -> None:
        super().__init__(props, definition or distributed_config_def())
        self._check_inter_worker_key_configs()

    def _check_inter_worker_key_configs(self) -> None:
        algorithm = self.get_string(INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG)
        size = self.get(INTER_WORKER_KEY_SIZE_CONFIG)
        try:
            key_length(algorithm, size)
        except ValueError as e:
            raise ConfigError(
                f"Unable to create key generator with algorithm {algorithm} and key size "
                f"{size}: {e}"
            ) from None
        signature = self.get_string(INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG)
        if signature not in self.get_list(INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG):
            raise ConfigError(
                INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG,
                signature,
                f"Signature algorithm must be present in "
                f"{INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG} list",
            )

    def with_bootstrap_servers(self, servers: str) -> DistributedConfig:
        """A copy on the embedded broker at ``servers``, with its defaults
        (:data:`~sparkcat.runtime.worker_config.EMBEDDED_BROKER_DEFAULTS`) where unset."""
        return DistributedConfig(
            {**EMBEDDED_BROKER_DEFAULTS, **self.originals(), BOOTSTRAP_SERVERS_CONFIG: servers},
            self.definition,
        )

    @property
    def group_id(self) -> str:
        return self.get_string(GROUP_ID_CONFIG)

    @property
    def connect_protocol(self) -> ConnectProtocolCompatibility:
        return ConnectProtocolCompatibility.from_config(self.get_string(CONNECT_PROTOCOL_CONFIG))

    @property
    def config_topic(self) -> str:
        return self.get_string(CONFIG_TOPIC_CONFIG)

    @property
    def offsets_topic(self) -> str:
        return self.get_string(OFFSET_STORAGE_TOPIC_CONFIG)

    @property
    def status_topic(self) -> str:
        return self.get_string(STATUS_STORAGE_TOPIC_CONFIG)

    @property
    def exactly_once_source_support(self) -> str:
        """``disabled``, ``preparing`` or ``enabled`` (lower case)."""
        return self.get_string(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG).lower()

    @property
    def exactly_once_source_enabled(self) -> bool:
        return self.exactly_once_source_support == "enabled"

    @property
    def transactional_leader_enabled(self) -> bool:
        return self.exactly_once_source_support != "disabled"

    @property
    def transactional_producer_id(self) -> str:
        return f"connect-cluster-{self.group_id}"

    def topic_settings(self, prefix: str) -> dict[str, Any]:
        """Extra topic configs given as ``<prefix><name>`` (Kafka's ``topicSettings``):
        without ``topic``, ``replication.factor``, ``partitions`` and ``cleanup.policy``
        (internal topics are always compacted)."""
        result = dict(self.originals_with_prefix(prefix, strip=True))
        for key in ("topic", "replication.factor", "partitions", "cleanup.policy"):
            result.pop(key, None)
        return result

    def advertised_url(self, default_host: str, default_port: int) -> str:
        """The REST url given to other workers: ``rest.advertised.listener|host.name|port``
        over the listener's scheme, ``default_host`` and ``default_port`` (Kafka's
        ``RestServer.advertisedUrl``), with a trailing ``/``."""
        scheme = self.get(REST_ADVERTISED_LISTENER_CONFIG) or _listener_scheme(
            self.get_list("listeners")
        )
        host = self.get(REST_ADVERTISED_HOST_NAME_CONFIG) or default_host
        port = self.get(REST_ADVERTISED_PORT_CONFIG) or default_port
        return f"{scheme}://{host}:{port}/"


def _listener_scheme(listeners: list[str]) -> str:
    for listener in listeners:
        if "://" in listener:
            return listener.split("://", 1)[0].lower()
    return "http"


__all__ = [
    "CONFIG_TOPIC_CONFIG",
    "CONNECT_PROTOCOL_CONFIG",
    "GROUP_ID_CONFIG",
    "HEARTBEAT_INTERVAL_MS_CONFIG",
    "INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG",
    "INTER_WORKER_KEY_SIZE_CONFIG",
    "INTER_WORKER_KEY_TTL_MS_CONFIG",
    "INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG",
    "INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG",
    "OFFSET_STORAGE_TOPIC_CONFIG",
    "REBALANCE_TIMEOUT_MS_CONFIG",
    "SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG",
    "SESSION_TIMEOUT_MS_CONFIG",
    "STATUS_STORAGE_TOPIC_CONFIG",
    "WORKER_SYNC_TIMEOUT_MS_CONFIG",
    "WORKER_UNSYNC_BACKOFF_MS_CONFIG",
    "DistributedConfig",
    "distributed_config_def",
]
