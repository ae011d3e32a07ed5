"""Config keys of ``io.debezium.connector.mysql.MySqlConnector`` and
``io.debezium.connector.mariadb.MariaDbConnector`` (Debezium's ``BinlogConnectorConfig``): the
common keys plus the binlog connectors' own, names and defaults verbatim, see
https://debezium.io/documentation/reference/stable/connectors/mysql.html#mysql-connector-properties
"""

from __future__ import annotations

from typing import Any

from sparkcat.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    Range,
)
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium.mysql.binlog_reader import ConnectionSettings

DATABASE_SERVER_ID = "database.server.id"
DATABASE_INCLUDE_LIST = "database.include.list"
DATABASE_EXCLUDE_LIST = "database.exclude.list"
INCLUDE_SCHEMA_CHANGES = "include.schema.changes"
INCLUDE_QUERY = "include.query"
BIGINT_UNSIGNED_HANDLING_MODE = "bigint.unsigned.handling.mode"
SNAPSHOT_LOCKING_MODE = "snapshot.locking.mode"
CONNECT_TIMEOUT_MS = "connect.timeout.ms"
SCHEMA_HISTORY_TOPIC = "schema.history.internal.kafka.topic"
SCHEMA_HISTORY_SERVERS = "schema.history.internal.kafka.bootstrap.servers"

SNAPSHOT_INITIAL = "initial"
SNAPSHOT_ALWAYS = "always"
SNAPSHOT_INITIAL_ONLY = "initial_only"
SNAPSHOT_NO_DATA = "no_data"
SNAPSHOT_SCHEMA_ONLY = "schema_only"
SNAPSHOT_WHEN_NEEDED = "when_needed"
SNAPSHOT_NEVER = "never"
SNAPSHOT_MODES = (SNAPSHOT_INITIAL, SNAPSHOT_ALWAYS, SNAPSHOT_INITIAL_ONLY, SNAPSHOT_NO_DATA,
                  SNAPSHOT_SCHEMA_ONLY, SNAPSHOT_WHEN_NEEDED, SNAPSHOT_NEVER)  # fmt: skip
LOCKING_MINIMAL = "minimal"
LOCKING_NONE = "none"

SNAPSHOT_EPOCH = "snapshot.epoch"
"""Task config written by the connector: the committed offset (JSON) when the connector
started, so ``snapshot.mode=always`` snapshots once per connector start, not once per lease."""
STREAM_START = "stream.start.position"
"""Task config written by the connector when nothing is committed and no snapshot will run
(``no_data``): the binlog position (JSON) at the connector's start, so every lease streams
from there until an offset is committed, and no change between two leases is lost."""


def _binlog_def() -> ConfigDef:
    config = common.common_config_def("adaptive_time_microseconds", 3306)
    return (
        config.define(DATABASE_SERVER_ID, ConfigType.LONG, importance=Importance.HIGH,
                      validator=Range.between(1, 2**32 - 1),
                      documentation="Numeric id the connector joins the replication "
                      "topology with; unique among the server's replicas.")
        .define(DATABASE_INCLUDE_LIST, ConfigType.LIST, "", importance=Importance.HIGH,
                documentation="Anchored regular expressions of the databases to capture.")
        .define(DATABASE_EXCLUDE_LIST, ConfigType.LIST, "", importance=Importance.HIGH,
                documentation="Anchored regular expressions of the databases not to capture.")
        .define(common.SNAPSHOT_MODE, ConfigType.STRING, SNAPSHOT_INITIAL,
                CaseInsensitiveValidString.in_(*SNAPSHOT_MODES), importance=Importance.HIGH,
                documentation="When to snapshot: initial, always, initial_only, no_data "
                "(schema_only), when_needed, never.")
        .define(SNAPSHOT_LOCKING_MODE, ConfigType.STRING, LOCKING_MINIMAL,
                CaseInsensitiveValidString.in_(LOCKING_MINIMAL, LOCKING_NONE),
                importance=Importance.LOW,
                documentation="minimal: a global read lock only while the binlog position "
                "is read and the snapshot transaction starts; none: no lock (MariaDB reads "
                "the position of the snapshot itself).")
        .define(INCLUDE_SCHEMA_CHANGES, ConfigType.BOOLEAN, True, importance=Importance.MEDIUM,
                documentation="Whether a schema change event of each DDL statement on a "
                "captured table is sent to the topic named after topic.prefix.")
        .define(INCLUDE_QUERY, ConfigType.BOOLEAN, False, importance=Importance.LOW,
                documentation="Whether source.query holds the statement of each change.")
        .define(BIGINT_UNSIGNED_HANDLING_MODE, ConfigType.STRING, "long",
                CaseInsensitiveValidString.in_("long", "precise"), importance=Importance.LOW,
                documentation="BIGINT UNSIGNED as int64 (long) or Decimal (precise).")
        .define(CONNECT_TIMEOUT_MS, ConfigType.LONG, 30_000, Range.at_least(1),
                importance=Importance.LOW,
                documentation="How long a connection to the server may take.")
        .define(SCHEMA_HISTORY_TOPIC, ConfigType.STRING, None, importance=Importance.HIGH,
                documentation="The topic (one partition, unlimited retention; created when "
                "missing) where the connector records each captured table's definition at "
                "every DDL statement and snapshot, so that a restarted task reads older rows "
                "with the columns they were written with. Without it, a restart reads the "
                "tables' current definitions.")
        .define(SCHEMA_HISTORY_SERVERS, ConfigType.STRING, None, importance=Importance.HIGH,
                documentation="The Kafka cluster of schema.history.internal.kafka.topic.")
        .define_internal(SNAPSHOT_EPOCH, ConfigType.STRING, "")
        .define_internal(STREAM_START, ConfigType.STRING, "")
    )  # fmt: skip


CONFIG_DEF = _binlog_def()


def snapshot_mode(config: AbstractConfig) -> str:
    """``snapshot.mode`` lower-cased, with ``schema_only`` read as its new name ``no_data``."""
    mode = str(config.get(common.SNAPSHOT_MODE)).lower()
    return SNAPSHOT_NO_DATA if mode == SNAPSHOT_SCHEMA_ONLY else mode


def connection_settings(config: AbstractConfig) -> ConnectionSettings:
    password: Any = config.get(common.DATABASE_PASSWORD)
    if password is not None and hasattr(password, "value"):
        password = password.value
    return ConnectionSettings(
        str(config.get(common.DATABASE_HOSTNAME)),
        int(config.get(common.DATABASE_PORT)),
        str(config.get(common.DATABASE_USER) or ""),
        "" if password is None else str(password),
    )


def connect(settings: ConnectionSettings, timeout_s: float = 30.0, **kwargs: Any) -> Any:
    """A pymysql connection that reads TIMESTAMPs in UTC and leaves transactions explicit."""
    import pymysql

    return pymysql.connect(**settings.pymysql(), connect_timeout=max(1, int(timeout_s)),
                           init_command="SET time_zone = '+00:00'", autocommit=True,
                           **kwargs)  # fmt: skip


__all__ = ["CONFIG_DEF", "connect", "connection_settings", "snapshot_mode"]
