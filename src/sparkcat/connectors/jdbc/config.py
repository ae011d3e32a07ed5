"""Config keys of the JDBC connectors: Confluent's ``io.confluent.connect.jdbc`` keys, names,
defaults and validators (source: ``JdbcSourceConnectorConfig``, sink: ``JdbcSinkConfig``)."""

from __future__ import annotations

from sparkcat import __version__
from sparkcat.api.config import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigType,
    Importance,
    Range,
    ValidString,
)

VERSION = __version__

CONNECTION_URL = "connection.url"
CONNECTION_USER = "connection.user"
CONNECTION_PASSWORD = "connection.password"
CONNECTION_ATTEMPTS = "connection.attempts"
CONNECTION_BACKOFF_MS = "connection.backoff.ms"
DIALECT_NAME = "dialect.name"
DB_TIMEZONE = "db.timezone"
QUOTE_SQL_IDENTIFIERS = "quote.sql.identifiers"

# Source
MODE = "mode"
MODE_BULK = "bulk"
MODE_TIMESTAMP = "timestamp"
MODE_INCREMENTING = "incrementing"
MODE_TIMESTAMP_INCREMENTING = "timestamp+incrementing"
INCREMENTING_COLUMN_NAME = "incrementing.column.name"
TIMESTAMP_COLUMN_NAME = "timestamp.column.name"
TIMESTAMP_INITIAL = "timestamp.initial"
VALIDATE_NON_NULL = "validate.non.null"
POLL_INTERVAL_MS = "poll.interval.ms"
BATCH_MAX_ROWS = "batch.max.rows"
TABLE_POLL_INTERVAL_MS = "table.poll.interval.ms"
TABLE_WHITELIST = "table.whitelist"
TABLE_BLACKLIST = "table.blacklist"
TABLE_INCLUDE_LIST = "table.include.list"
TABLE_EXCLUDE_LIST = "table.exclude.list"
TABLE_TYPES = "table.types"
SCHEMA_PATTERN = "schema.pattern"
CATALOG_PATTERN = "catalog.pattern"
QUERY = "query"
QUERY_SUFFIX = "query.suffix"
TOPIC_PREFIX = "topic.prefix"
NUMERIC_MAPPING = "numeric.mapping"
NUMERIC_PRECISION_MAPPING = "numeric.precision.mapping"
TIMESTAMP_DELAY_INTERVAL_MS = "timestamp.delay.interval.ms"
TABLES = "tables"
"""Task config: the fully qualified tables (``db.schema.table``) of one task, comma-separated."""

# Sink
INSERT_MODE = "insert.mode"
PK_MODE = "pk.mode"
PK_FIELDS = "pk.fields"
FIELDS_WHITELIST = "fields.whitelist"
AUTO_CREATE = "auto.create"
AUTO_EVOLVE = "auto.evolve"
DELETE_ENABLED = "delete.enabled"
TABLE_NAME_FORMAT = "table.name.format"
BATCH_SIZE = "batch.size"
MAX_RETRIES = "max.retries"
RETRY_BACKOFF_MS = "retry.backoff.ms"

# Offsets (Confluent's JdbcSourceConnectorConstants / TimestampIncrementingOffset)
TABLE_NAME_KEY = "table"
QUERY_NAME_KEY = "query"
QUERY_NAME_VALUE = "query"
PROTOCOL_KEY = "protocol"
PROTOCOL_V1 = "1"
INCREMENTING_FIELD = "incrementing"
TIMESTAMP_FIELD = "timestamp"
TIMESTAMP_NANOS_FIELD = "timestamp_nanos"


def _common(config: ConfigDef) -> ConfigDef:
    return (
        config.define(
            CONNECTION_URL,
            ConfigType.STRING,
            importance=Importance.HIGH,
            documentation="JDBC connection URL (jdbc:postgresql://, jdbc:mysql://, "
            "jdbc:mariadb://, jdbc:sqlite:) or a SQLAlchemy URL.",
        )
        .define(
            CONNECTION_USER,
            ConfigType.STRING,
            None,
            importance=Importance.HIGH,
            documentation="JDBC connection user.",
        )
        .define(
            CONNECTION_PASSWORD,
            ConfigType.PASSWORD,
            None,
            importance=Importance.HIGH,
            documentation="JDBC connection password.",
        )
        .define(
            CONNECTION_ATTEMPTS,
            ConfigType.INT,
            3,
            Range(1, None),
            importance=Importance.LOW,
            documentation="Maximum number of attempts to retrieve a valid connection.",
        )
        .define(
            CONNECTION_BACKOFF_MS,
            ConfigType.LONG,
            10_000,
            importance=Importance.LOW,
            documentation="Backoff time in milliseconds between connection attempts.",
        )
        .define(
            DIALECT_NAME,
            ConfigType.STRING,
            "",
            ValidString.in_(
                "", "PostgreSqlDatabaseDialect", "MySqlDatabaseDialect", "SqliteDatabaseDialect"
            ),
            importance=Importance.LOW,
            documentation="The dialect to use; empty: derived from connection.url.",
        )
        .define(
            DB_TIMEZONE,
            ConfigType.STRING,
            "UTC",
            importance=Importance.MEDIUM,
            documentation="Name of the timezone of naive DATE/TIME/TIMESTAMP values in the "
            "database.",
        )
        .define(
            QUOTE_SQL_IDENTIFIERS,
            ConfigType.STRING,
            "ALWAYS",
            CaseInsensitiveValidString.in_("always", "never"),
            importance=Importance.MEDIUM,
            documentation="When to quote table, column and other identifiers in SQL.",
        )
    )


SOURCE_CONFIG_DEF = (
    _common(ConfigDef())
    .define(
        MODE,
        ConfigType.STRING,
        "",
        ValidString.in_(
            "", MODE_BULK, MODE_TIMESTAMP, MODE_INCREMENTING, MODE_TIMESTAMP_INCREMENTING
        ),
        importance=Importance.HIGH,
        documentation="How each table is polled.",
    )
    .define(
        INCREMENTING_COLUMN_NAME,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="Strictly incrementing column; empty: the table's auto-increment column.",
    )
    .define(
        TIMESTAMP_COLUMN_NAME,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Timestamp columns (COALESCE of them) that detect new and changed rows.",
    )
    .define(
        TIMESTAMP_INITIAL,
        ConfigType.LONG,
        None,
        importance=Importance.LOW,
        documentation="Epoch ms to start timestamp modes from when there is no offset; "
        "-1: the current time.",
    )
    .define(
        VALIDATE_NON_NULL,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Fail when the incrementing/timestamp columns are nullable.",
    )
    .define(
        POLL_INTERVAL_MS,
        ConfigType.INT,
        5000,
        importance=Importance.HIGH,
        documentation="Frequency in ms to poll for new data in each table.",
    )
    .define(
        BATCH_MAX_ROWS,
        ConfigType.INT,
        1000,
        Range(1, None),
        importance=Importance.LOW,
        documentation="Maximum number of rows in one poll.",
    )
    .define(
        TABLE_POLL_INTERVAL_MS,
        ConfigType.LONG,
        60_000,
        importance=Importance.LOW,
        documentation="Frequency in ms to look for new or removed tables.",
    )
    .define(
        TABLE_WHITELIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Tables to copy (names or fully qualified names).",
    )
    .define(
        TABLE_BLACKLIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Tables not to copy.",
    )
    .define(
        TABLE_INCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Regular expressions of fully qualified tables to copy.",
    )
    .define(
        TABLE_EXCLUDE_LIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Regular expressions of fully qualified tables not to copy.",
    )
    .define(
        TABLE_TYPES,
        ConfigType.LIST,
        "TABLE",
        importance=Importance.LOW,
        documentation="Table types to copy: TABLE and/or VIEW.",
    )
    .define(
        SCHEMA_PATTERN,
        ConfigType.STRING,
        None,
        importance=Importance.MEDIUM,
        documentation="Schema (SQL LIKE pattern) to find tables in; unset: the default schema.",
    )
    .define(
        CATALOG_PATTERN,
        ConfigType.STRING,
        None,
        importance=Importance.MEDIUM,
        documentation="Catalog (database) to find tables in; unset: the connection's.",
    )
    .define(
        QUERY,
        ConfigType.STRING,
        "",
        importance=Importance.MEDIUM,
        documentation="Custom query instead of whole tables.",
    )
    .define(
        QUERY_SUFFIX,
        ConfigType.STRING,
        "",
        importance=Importance.LOW,
        documentation="Suffix appended to the generated query.",
    )
    .define(
        TOPIC_PREFIX,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="Prefix of the table name that makes the topic (or the topic in query mode).",
    )
    .define(
        NUMERIC_MAPPING,
        ConfigType.STRING,
        None,
        ValidString.in_("none", "precision_only", "best_fit", "best_fit_eager_double"),
        importance=Importance.LOW,
        documentation="How NUMERIC/DECIMAL columns map.",
    )
    .define(
        NUMERIC_PRECISION_MAPPING,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Deprecated: numeric.mapping=precision_only.",
    )
    .define(
        TIMESTAMP_DELAY_INTERVAL_MS,
        ConfigType.LONG,
        0,
        importance=Importance.HIGH,
        documentation="How long after a timestamp a row is read, so its transaction has committed.",
    )
)

SINK_CONFIG_DEF = (
    _common(ConfigDef())
    .define(
        INSERT_MODE,
        ConfigType.STRING,
        "insert",
        CaseInsensitiveValidString.in_("insert", "upsert", "update"),
        importance=Importance.HIGH,
        documentation="insert, upsert or update.",
    )
    .define(
        PK_MODE,
        ConfigType.STRING,
        "none",
        CaseInsensitiveValidString.in_("none", "kafka", "record_key", "record_value"),
        importance=Importance.HIGH,
        documentation="Where the primary key comes from.",
    )
    .define(
        PK_FIELDS,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Primary key field names (meaning depends on pk.mode).",
    )
    .define(
        FIELDS_WHITELIST,
        ConfigType.LIST,
        "",
        importance=Importance.MEDIUM,
        documentation="Record value fields to write; empty: all.",
    )
    .define(
        AUTO_CREATE,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Create the table when it is missing.",
    )
    .define(
        AUTO_EVOLVE,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Add columns for new record fields.",
    )
    .define(
        DELETE_ENABLED,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Tombstones delete rows (needs pk.mode=record_key).",
    )
    .define(
        TABLE_NAME_FORMAT,
        ConfigType.STRING,
        "${topic}",
        importance=Importance.MEDIUM,
        documentation="Table name; ${topic} is replaced by the record's topic.",
    )
    .define(
        BATCH_SIZE,
        ConfigType.INT,
        3000,
        Range(0, None),
        importance=Importance.MEDIUM,
        documentation="Records per batched statement.",
    )
    .define(
        MAX_RETRIES,
        ConfigType.INT,
        10,
        Range(0, None),
        importance=Importance.MEDIUM,
        documentation="Retries of a failed write before the task fails.",
    )
    .define(
        RETRY_BACKOFF_MS,
        ConfigType.INT,
        3000,
        Range(0, None),
        importance=Importance.MEDIUM,
        documentation="Wait in ms before retrying a failed write.",
    )
)
