"""Config keys every Debezium connector shares (Debezium's ``CommonConnectorConfig`` and
``RelationalDatabaseConnectorConfig``): names and defaults verbatim, see
https://debezium.io/documentation/reference/stable/connectors/postgresql.html#postgresql-connector-properties
"""

from __future__ import annotations

from sparkcat import __version__
from sparkcat.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
)
from sparkcat.api.errors import ConfigError

DEBEZIUM_VERSION = "3.1.3.Final"
"""What ``source.version`` says: the Debezium release whose output this core reproduces."""
VERSION = __version__

TOPIC_PREFIX = "topic.prefix"
DATABASE_HOSTNAME = "database.hostname"
DATABASE_PORT = "database.port"
DATABASE_USER = "database.user"
DATABASE_PASSWORD = "database.password"
TABLE_INCLUDE_LIST = "table.include.list"
TABLE_EXCLUDE_LIST = "table.exclude.list"
COLUMN_INCLUDE_LIST = "column.include.list"
COLUMN_EXCLUDE_LIST = "column.exclude.list"
MESSAGE_KEY_COLUMNS = "message.key.columns"
TOMBSTONES_ON_DELETE = "tombstones.on.delete"
DECIMAL_HANDLING_MODE = "decimal.handling.mode"
TIME_PRECISION_MODE = "time.precision.mode"
BINARY_HANDLING_MODE = "binary.handling.mode"
SNAPSHOT_MODE = "snapshot.mode"
SNAPSHOT_FETCH_SIZE = "snapshot.fetch.size"
MAX_BATCH_SIZE = "max.batch.size"
POLL_INTERVAL_MS = "poll.interval.ms"
HEARTBEAT_INTERVAL_MS = "heartbeat.interval.ms"
TOPIC_HEARTBEAT_PREFIX = "topic.heartbeat.prefix"
TOPIC_DELIMITER = "topic.delimiter"
SKIPPED_OPERATIONS = "skipped.operations"
PROVIDE_TRANSACTION_METADATA = "provide.transaction.metadata"
TASKS_MAX = "tasks.max"
SIGNAL_DATA_COLLECTION = "signal.data.collection"
SIGNAL_ENABLED_CHANNELS = "signal.enabled.channels"
INCREMENTAL_SNAPSHOT_CHUNK_SIZE = "incremental.snapshot.chunk.size"
INCREMENTAL_SNAPSHOT_WATERMARKING_STRATEGY = "incremental.snapshot.watermarking.strategy"

DECIMAL_MODES = ("precise", "double", "string")
TIME_PRECISION_MODES = ("adaptive", "adaptive_time_microseconds", "connect")
BINARY_MODES = ("bytes", "base64", "base64-url-safe", "hex")
OPERATION_CODES = ("c", "u", "d", "t")


def _skipped_operations(name: str, value: object) -> None:
    if value is None:
        return
    for code in str(value).split(","):
        code = code.strip().lower()
        if code and code != "none" and code not in OPERATION_CODES:
            raise ConfigError(
                f"Invalid value {value} for configuration {name}: "
                f"'{code}' is not one of c, u, d, t or none"
            )


_SKIPPED_OPERATIONS = LambdaValidator.with_(
    _skipped_operations, "a comma-separated list of c, u, d, t, or none"
)


def common_config_def(default_time_precision: str, default_port: int) -> ConfigDef:
    """The keys every connector has; each database adds its own to a copy of this one."""
    return (
        ConfigDef()
        .define(
            TOPIC_PREFIX,
            ConfigType.STRING,
            importance=Importance.HIGH,
            documentation="Logical name of the database server: the prefix of every "
            "topic name, schema name and the offset partition. Never change it.",
        )
        .define(
            DATABASE_HOSTNAME,
            ConfigType.STRING,
            "localhost",
            importance=Importance.HIGH,
            documentation="Host of the database server.",
        )
        .define(
            DATABASE_PORT,
            ConfigType.INT,
            default_port,
            Range.between(1, 65535),
            importance=Importance.HIGH,
            documentation="Port of the database server.",
        )
        .define(
            DATABASE_USER,
            ConfigType.STRING,
            None,
            importance=Importance.HIGH,
            documentation="Database user to connect as.",
        )
        .define(
            DATABASE_PASSWORD,
            ConfigType.PASSWORD,
            None,
            importance=Importance.HIGH,
            documentation="Password of database.user.",
        )
        .define(
            TABLE_INCLUDE_LIST,
            ConfigType.LIST,
            "",
            importance=Importance.HIGH,
            documentation="Anchored regular expressions of the tables to capture.",
        )
        .define(
            TABLE_EXCLUDE_LIST,
            ConfigType.LIST,
            "",
            importance=Importance.HIGH,
            documentation="Anchored regular expressions of the tables not to capture.",
        )
        .define(
            COLUMN_INCLUDE_LIST,
            ConfigType.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="Anchored regular expressions of the columns to include.",
        )
        .define(
            COLUMN_EXCLUDE_LIST,
            ConfigType.LIST,
            "",
            importance=Importance.MEDIUM,
            documentation="Anchored regular expressions of the columns to leave out.",
        )
        .define(
            MESSAGE_KEY_COLUMNS,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="Key columns per table, e.g. 'inventory.customers:pk1,pk2;"
            "(.*).orders:pk3', instead of the primary key.",
        )
        .define(
            TOMBSTONES_ON_DELETE,
            ConfigType.BOOLEAN,
            True,
            importance=Importance.MEDIUM,
            documentation="Whether a delete event is followed by a tombstone.",
        )
        .define(
            DECIMAL_HANDLING_MODE,
            ConfigType.STRING,
            "precise",
            CaseInsensitiveValidString.in_(*DECIMAL_MODES),
            importance=Importance.MEDIUM,
            documentation="DECIMAL/NUMERIC values as Connect Decimal (precise), double or string.",
        )
        .define(
            TIME_PRECISION_MODE,
            ConfigType.STRING,
            default_time_precision,
            CaseInsensitiveValidString.in_(*TIME_PRECISION_MODES),
            importance=Importance.MEDIUM,
            documentation="Temporal values as Debezium's types at the column's precision "
            "(adaptive), with TIME always in microseconds (adaptive_time_microseconds), "
            "or as Connect's Date/Time/Timestamp (connect).",
        )
        .define(
            BINARY_HANDLING_MODE,
            ConfigType.STRING,
            "bytes",
            CaseInsensitiveValidString.in_(*BINARY_MODES),
            importance=Importance.LOW,
            documentation="Binary columns as bytes, base64, base64-url-safe or hex strings.",
        )
        .define(
            SNAPSHOT_FETCH_SIZE,
            ConfigType.INT,
            10240,
            Range.at_least(1),
            importance=Importance.MEDIUM,
            documentation="Rows read per round trip while snapshotting a table.",
        )
        .define(
            MAX_BATCH_SIZE,
            ConfigType.INT,
            2048,
            Range.at_least(1),
            importance=Importance.MEDIUM,
            documentation="Most events one poll returns.",
        )
        .define(
            POLL_INTERVAL_MS,
            ConfigType.LONG,
            500,
            Range.at_least(1),
            importance=Importance.MEDIUM,
            documentation="Longest a poll waits for new events.",
        )
        .define(
            HEARTBEAT_INTERVAL_MS,
            ConfigType.INT,
            0,
            Range.at_least(0),
            importance=Importance.MEDIUM,
            documentation="How often a heartbeat record carries the current offset; 0: never.",
        )
        .define(
            TOPIC_HEARTBEAT_PREFIX,
            ConfigType.STRING,
            "__debezium-heartbeat",
            importance=Importance.LOW,
            documentation="Prefix of the heartbeat topic.",
        )
        .define(
            TOPIC_DELIMITER,
            ConfigType.STRING,
            ".",
            importance=Importance.LOW,
            documentation="Delimiter between the parts of a topic name.",
        )
        .define(
            SKIPPED_OPERATIONS,
            ConfigType.STRING,
            "t",
            _SKIPPED_OPERATIONS,
            importance=Importance.LOW,
            documentation="Operations not emitted: c, u, d, t (comma-separated) or none.",
        )
        .define(
            SIGNAL_DATA_COLLECTION,
            ConfigType.STRING,
            "",
            importance=Importance.MEDIUM,
            documentation="The signal table (schema.table or db.table): rows inserted there "
            "start (execute-snapshot) and stop (stop-snapshot) incremental snapshots.",
        )
        .define(
            SIGNAL_ENABLED_CHANNELS,
            ConfigType.LIST,
            "source",
            importance=Importance.LOW,
            documentation="Where signals come from: only source (the signal table).",
        )
        .define(
            INCREMENTAL_SNAPSHOT_CHUNK_SIZE,
            ConfigType.INT,
            1024,
            Range.at_least(1),
            importance=Importance.MEDIUM,
            documentation="Rows per chunk of an incremental snapshot.",
        )
        .define(
            INCREMENTAL_SNAPSHOT_WATERMARKING_STRATEGY,
            ConfigType.STRING,
            "insert_insert",
            CaseInsensitiveValidString.in_("insert_insert"),
            importance=Importance.LOW,
            documentation="How chunk windows are marked in the signal table: insert_insert.",
        )
        .define(
            PROVIDE_TRANSACTION_METADATA,
            ConfigType.BOOLEAN,
            False,
            importance=Importance.LOW,
            documentation="Transaction metadata events and envelope blocks (not supported "
            "yet: must be false).",
        )
    )


def skipped_operations(config: AbstractConfig) -> frozenset[str]:
    """The operation codes ``skipped.operations`` names (``none`` means none)."""
    raw = str(config.get(SKIPPED_OPERATIONS) or "")
    codes = {c.strip().lower() for c in raw.split(",") if c.strip()}
    return frozenset(codes - {"none"})


def common_problems(config: AbstractConfig, scope: tuple[str, str]) -> list[tuple[str, str]]:
    """What every Debezium connector refuses: both keys of an include/exclude pair (tables,
    ``scope`` — schemas or databases —, columns), a malformed ``message.key.columns``, and
    transaction metadata (not supported yet)."""
    from sparkcat.connectors.debezium.filters import KeyColumns

    problems: list[tuple[str, str]] = []
    for include, exclude in (
        (TABLE_INCLUDE_LIST, TABLE_EXCLUDE_LIST),
        scope,
        (COLUMN_INCLUDE_LIST, COLUMN_EXCLUDE_LIST),
    ):
        if config.get(include) and config.get(exclude):
            problems.append((exclude, f'"{include}" is already specified'))
    try:
        KeyColumns.parse(str(config.get(MESSAGE_KEY_COLUMNS) or ""))
    except ConfigError as exc:
        problems.append((MESSAGE_KEY_COLUMNS, str(exc)))
    if config.get(PROVIDE_TRANSACTION_METADATA):
        problems.append((PROVIDE_TRANSACTION_METADATA, "Transaction metadata is not supported yet"))
    return problems


__all__ = [
    "DEBEZIUM_VERSION",
    "VERSION",
    "common_config_def",
    "common_problems",
    "skipped_operations",
]
