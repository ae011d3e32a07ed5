"""The worker config: Kafka Connect's ``WorkerConfig`` + ``StandaloneConfig`` keys, plus sparkcat's.

Kafka's keys keep their names, types and defaults, with one
deliberate difference: ``bootstrap.servers`` defaults to ``embedded`` (Kafka:
``localhost:9092``), which makes the CLI start an embedded Kafka-compatible broker and use its
address. ``key.converter``/``value.converter`` stay required, as in Kafka.

Keys that are passed through untouched (not defined here, kept in :meth:`originals`):
``producer.*``, ``consumer.*``, ``admin.*`` client defaults, ``key.converter.*`` etc.
converter settings, ``ssl.*``, ``config.providers.<alias>.*``, and every ``spark.*`` key
(handed to the SparkSession builder by :meth:`WorkerConfig.spark_conf`).

sparkcat's own keys:

``spark.master`` (default ``local[*]``)
    The Spark master of the worker's SparkSession.
``max.batch.ms`` (default 5000) and ``max.batch.records`` (default 10000000)
    The bounds of one *lease* — one task instance's run between two offset commits. A lease
    ends after this many milliseconds or once this many records were copied, whichever comes
    first. Each lease starts and stops the task instance, so shorter leases waste
    throughput, and a lease commits offsets when it ends, so longer ones delay commits. The
    record bound is above what one task copies in 5 s: with 1000000, a task copying 500k
    records/s handed its lease over every 2 s (bench/RESULTS.md, Pipeline). Both may also be
    set per connector (same key names in the connector config; ``lease_bounds`` in
    ``sparkcat.engine.connector_query`` merges them).
``sparkcat.task.hosts`` (default: derived from the Spark master)
    How many long-running Spark tasks (task hosts) run the worker's leases, each any number
    of them on threads (see ``sparkcat.engine.task_hosts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    ValidString,
)
from sparkcat.api.errors import ConfigError

BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers"
EMBEDDED_BOOTSTRAP = "embedded"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
HEADER_CONVERTER_CLASS_DEFAULT = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
PLUGIN_PATH_CONFIG = "plugin.path"
LISTENERS_CONFIG = "listeners"
LISTENERS_DEFAULT = "http://:8083"
OFFSET_FLUSH_INTERVAL_MS_CONFIG = "offset.flush.interval.ms"
OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"
CONNECTOR_CLIENT_POLICY_CLASS_CONFIG = "connector.client.config.override.policy"
SPARK_MASTER_CONFIG = "spark.master"
SPARK_MASTER_DEFAULT = "local[*]"
TASK_HOSTS_CONFIG = "sparkcat.task.hosts"
MAX_BATCH_MS_CONFIG = "max.batch.ms"
MAX_BATCH_MS_DEFAULT = 5000
MAX_BATCH_RECORDS_CONFIG = "max.batch.records"
MAX_BATCH_RECORDS_DEFAULT = 10_000_000
# The embedded broker (tansu) answers a fetch that waits for data only as its wait runs out, not
# when data arrives: with Kafka's 500 ms wait a record reached a waiting consumer ~115 ms after
# it was produced, with 100 ms ~17 ms. A sink that catches up with its source waits that long
# each time (bench/RESULTS.md, Pipeline). Kafka brokers answer at once, so only here.
EMBEDDED_BROKER_DEFAULTS: dict[str, str] = {"consumer.fetch.max.wait.ms": "100"}

_POLICY_PACKAGE = "org.apache.kafka.connect.connector.policy."
OVERRIDE_POLICIES = ("All", "None", "Principal")


def override_policy_name(value: str) -> str:
    """``All``/``None``/``Principal`` for a policy given by alias or Kafka class name."""
    for policy in OVERRIDE_POLICIES:
        if value in (policy, f"{_POLICY_PACKAGE}{policy}ConnectorClientConfigOverridePolicy"):
            return policy
    raise ConfigError(
        CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
        value,
        "Not a known override policy (All, None, Principal)",
    )


def _check_policy(name: str, value: Any) -> None:
    override_policy_name(str(value))


def _non_empty_list(name: str, value: Any) -> None:
    if not value:
        raise ConfigError(name, value, "Empty list")


def base_config_def() -> ConfigDef:
    """The keys common to standalone and distributed workers."""
    t, imp = ConfigType, Importance
    return (
        ConfigDef()
        .define(BOOTSTRAP_SERVERS_CONFIG, t.LIST, EMBEDDED_BOOTSTRAP, None, imp.HIGH,
                "Kafka brokers to connect to (host:port,...). Absent or 'embedded': the worker "
                "starts an embedded Kafka-compatible broker on a free loopback port.")
        .define("client.dns.lookup", t.STRING, "use_all_dns_ips",
                ValidString.in_("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
                imp.MEDIUM, "How clients use the DNS lookups of bootstrap servers.")
        .define(KEY_CONVERTER_CLASS_CONFIG, t.CLASS, documentation=(
                "Converter between Connect data and the bytes of record keys in Kafka."),
                importance=imp.HIGH)
        .define(VALUE_CONVERTER_CLASS_CONFIG, t.CLASS, documentation=(
                "Converter between Connect data and the bytes of record values in Kafka."),
                importance=imp.HIGH)
        .define(HEADER_CONVERTER_CLASS_CONFIG, t.CLASS, HEADER_CONVERTER_CLASS_DEFAULT, None,
                imp.LOW, "Converter between Connect data and the bytes of record headers.")
        .define("task.shutdown.graceful.timeout.ms", t.LONG, 5000, None, imp.LOW,
                "How long to wait, in total over all tasks, for tasks to stop gracefully.")
        .define(OFFSET_FLUSH_INTERVAL_MS_CONFIG, t.LONG, 60000, None, imp.LOW,
                "Interval between offset commits of tasks.")
        .define("offset.flush.timeout.ms", t.LONG, 5000, None, imp.LOW,
                "Longest wait for records to be acked before an offset commit is cancelled.")
        .define(PLUGIN_PATH_CONFIG, t.LIST, None, None, imp.LOW,
                "Directories holding Python plugin modules or packages (see "
                "sparkcat.runtime.isolation.plugins).")
        .define("plugin.discovery", t.STRING, "hybrid_warn",
                CaseInsensitiveValidString.in_("only_scan", "hybrid_warn", "hybrid_fail",
                                               "service_load"),
                imp.LOW, "Accepted for compatibility; sparkcat always discovers lazily.")
        .define("metrics.sample.window.ms", t.LONG, 30000, Range.at_least(0), imp.LOW,
                "Window of a metrics sample.")
        .define("metrics.num.samples", t.INT, 2, Range.at_least(1), imp.LOW,
                "Number of samples kept per metric.")
        .define("metrics.recording.level", t.STRING, "INFO", ValidString.in_("INFO", "DEBUG"),
                imp.LOW, "Highest recording level of metrics.")
        .define("metric.reporters", t.LIST, "org.apache.kafka.common.metrics.JmxReporter",
                None, imp.LOW, "Metric reporter classes (accepted for compatibility).")
        .define("config.providers", t.LIST, "", None, imp.LOW,
                "Aliases of config providers; each configured by config.providers.<alias>.*.")
        .define(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG, t.STRING, "All",
                LambdaValidator.with_(_check_policy, lambda: "All, None or Principal"),
                imp.MEDIUM,
                "Which producer/consumer/admin overrides connectors may set: All, None, "
                "Principal (only sasl.jaas.config, sasl.mechanism, security.protocol).")
        .define("topic.creation.enable", t.BOOLEAN, True, None, imp.LOW,
                "Whether source connectors may create topics (topic.creation.* settings).")
        .define("topic.tracking.enable", t.BOOLEAN, True, None, imp.LOW,
                "Whether the topics connectors use are tracked.")
        .define("topic.tracking.allow.reset", t.BOOLEAN, True, None, imp.LOW,
                "Whether tracked topics may be reset through the REST API.")
        .define(LISTENERS_CONFIG, t.LIST, LISTENERS_DEFAULT,
                LambdaValidator.with_(_non_empty_list, lambda: "List of comma-separated URLs"),
                imp.LOW, "REST listeners: http://host:port,... (empty host: all interfaces).")
        .define("rest.advertised.host.name", t.STRING, None, None, imp.LOW,
                "Host name given to other workers and used in worker_id.")
        .define("rest.advertised.port", t.INT, None, None, imp.LOW,
                "Port given to other workers and used in worker_id.")
        .define("rest.advertised.listener", t.STRING, None, None, imp.LOW,
                "Advertised listener protocol (http or https).")
        .define("access.control.allow.origin", t.STRING, "", None, imp.LOW,
                "CORS allowed origins (empty: CORS off).")
        .define("access.control.allow.methods", t.STRING, "", None, imp.LOW,
                "CORS allowed methods.")
        .define("response.http.headers.config", t.STRING, "", None, imp.LOW,
                "Rules for HTTP response headers.")
        .define("ssl.client.auth", t.STRING, "none", None, imp.LOW,
                "Client authentication of https listeners: required, requested or none "
                "(listeners.https.ssl.client.auth wins).")
        .define("rest.extension.classes", t.LIST, "", None, imp.LOW,
                "REST extensions (ConnectRestExtension), e.g. Kafka's "
                "BasicAuthSecurityRestExtension.")
        .define("admin.listeners", t.LIST, None, None, imp.LOW,
                "Listeners of the admin endpoints (unset: the regular listeners).")
        .define(SPARK_MASTER_CONFIG, t.STRING, SPARK_MASTER_DEFAULT, None, imp.MEDIUM,
                "Spark master of the worker's SparkSession; other spark.* keys pass through.")
        .define(MAX_BATCH_MS_CONFIG, t.LONG, MAX_BATCH_MS_DEFAULT, Range.at_least(1), imp.MEDIUM,
                "Longest duration of one task lease (a task's run between offset commits), "
                "in ms.")
        .define(TASK_HOSTS_CONFIG, t.INT, None, Range.at_least(1), imp.LOW,
                "Spark tasks that host the worker's leases (unset: half the Spark slots, at "
                "most 4 on a local master).")
        .define(MAX_BATCH_RECORDS_CONFIG, t.LONG, MAX_BATCH_RECORDS_DEFAULT, Range.at_least(1),
                imp.MEDIUM, "Most records one task lease copies.")
    )  # fmt: skip


def standalone_config_def() -> ConfigDef:
    """:func:`base_config_def` plus ``offset.storage.file.filename`` (required)."""
    return base_config_def().define(
        OFFSET_STORAGE_FILE_FILENAME_CONFIG,
        ConfigType.STRING,
        documentation="File in which a standalone worker stores source connectors' offsets.",
        importance=Importance.HIGH,
    )


class WorkerConfig(AbstractConfig):
    """A parsed standalone worker config. Raises :class:`ConfigError` when invalid."""

    def __init__(self, props: Mapping[str, Any], definition: ConfigDef | None = None) -> None:
        super().__init__(definition or standalone_config_def(), props)

    @property
    def uses_embedded_broker(self) -> bool:
        """True when ``bootstrap.servers`` is absent, empty or ``embedded``."""
        servers = [s for s in self.get_list(BOOTSTRAP_SERVERS_CONFIG) if s]
        return not servers or servers == [EMBEDDED_BOOTSTRAP]

    def with_bootstrap_servers(self, servers: str) -> WorkerConfig:
        """A copy whose ``bootstrap.servers`` is ``servers`` (the embedded broker's address),
        with :data:`EMBEDDED_BROKER_DEFAULTS` where the worker config sets nothing."""
        return WorkerConfig(
            {**EMBEDDED_BROKER_DEFAULTS, **self.originals(), BOOTSTRAP_SERVERS_CONFIG: servers},
            self.definition,
        )

    def spark_conf(self) -> dict[str, str]:
        """Every ``spark.*`` setting, as given, with ``spark.master`` defaulted."""
        conf = {k: str(v) for k, v in self.originals_with_prefix("spark.", strip=False).items()}
        conf.setdefault(SPARK_MASTER_CONFIG, self.get_string(SPARK_MASTER_CONFIG))
        return conf

    def plugin_path(self) -> list[str]:
        return [p for p in (self.get(PLUGIN_PATH_CONFIG) or []) if p]

    def strings(self) -> dict[str, str]:
        """The worker config as the string map handed to the engine and to leases."""
        return {k: str(v) for k, v in self.originals().items() if v is not None}


def lease_bounds(worker: WorkerConfig, connector_config: Mapping[str, str]) -> tuple[int, int]:
    """``(max.batch.ms, max.batch.records)`` for a connector: its own values win over the
    worker's. Raises :class:`ConfigError` for a connector value that is not a positive long."""
    bounds = []
    for key in (MAX_BATCH_MS_CONFIG, MAX_BATCH_RECORDS_CONFIG):
        raw = connector_config.get(key)
        if raw is None:
            bounds.append(worker.get_long(key))
            continue
        definition = worker.definition.config_keys()[key]
        bounds.append(ConfigDef.parse_value(definition, raw, True))
    return bounds[0], bounds[1]


__all__ = [
    "BOOTSTRAP_SERVERS_CONFIG",
    "EMBEDDED_BOOTSTRAP",
    "MAX_BATCH_MS_CONFIG",
    "MAX_BATCH_RECORDS_CONFIG",
    "WorkerConfig",
    "base_config_def",
    "lease_bounds",
    "override_policy_name",
    "standalone_config_def",
]
