"""Config keys of the Spark-native connectors (sparkcat's own: Kafka has no such connector),
read by their connectors (:mod:`sparkcat.engine.native_connectors`) and their data plane
(:mod:`sparkcat.engine.native_sink`, :mod:`sparkcat.engine.native_source`) alike. Imports
:mod:`sparkcat.api` only: validation needs no Spark.

``spark.option.<name>`` keys are passed to Spark's reader or writer as option ``<name>``
(``spark.option.compression=zstd``, ``spark.option.url=jdbc:postgresql://...``). The task
configs carry :data:`NATIVE_KEY`, which tells the engine to run the connector through Spark's
own readers and writers instead of running a task instance per lease.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkcat import __version__
from sparkcat.api.config import ConfigDef, ConfigType, ConfigValue, Importance, Range
from sparkcat.api.connector import Config

VERSION = __version__

# Set in every task config; its value ("sink" or "source") selects the engine's native path.
NATIVE_KEY = "sparkcat.native"

FORMAT_CONFIG = "spark.format"
PATH_CONFIG = "spark.path"
TABLE_CONFIG = "spark.table"
MODE_CONFIG = "spark.mode"
PARTITION_BY_CONFIG = "spark.partition.by"
OPTION_PREFIX = "spark.option."
VALUE_SCHEMA_CONFIG = "spark.value.schema"
FLUSH_SIZE_CONFIG = "flush.size"
ROTATE_INTERVAL_MS_CONFIG = "rotate.interval.ms"

TOPIC_CONFIG = "topic"
INCREMENTING_COLUMN_CONFIG = "spark.incrementing.column"
SCHEMA_CONFIG = "spark.schema"
POLL_INTERVAL_MS_CONFIG = "poll.interval.ms"
MAX_FILES_CONFIG = "spark.max.files.per.batch"

APPEND = "append"

# Spark picks a JDBC dialect by URL prefix and has none for jdbc:mariadb:, so it would quote
# names with double quotes, which MariaDB (without ANSI_QUOTES) reads as string literals:
# table creation fails and a filtered read compares against a constant string.
MARIADB_URL_MESSAGE = (
    "Spark has no JDBC dialect for jdbc:mariadb: URLs (names would be quoted with double "
    "quotes, which MariaDB reads as strings): write the URL as jdbc:mysql://host:port/db with "
    "spark.option.driver=org.mariadb.jdbc.Driver, so Spark uses its MySQL dialect (MariaDB "
    "Connector/J 3.x also needs ?permitMysqlScheme in the URL)"
)

_GROUP = "Spark"


def _common(definition: ConfigDef) -> ConfigDef:
    string = ConfigType.STRING
    return (
        definition.define(FORMAT_CONFIG, string, "parquet", importance=Importance.HIGH,
                          group=_GROUP, documentation="The Spark data source: parquet, orc, "
                          "json, csv, text, jdbc, delta, iceberg, ... (any name Spark's "
                          "DataFrameWriter/Reader format() takes).")
        .define(PATH_CONFIG, string, None, importance=Importance.HIGH, group=_GROUP,
                documentation="A directory (local path or any Hadoop URI). Exactly one of "
                "spark.path and spark.table; neither for jdbc, which takes "
                "spark.option.url and spark.option.dbtable.")
        .define(TABLE_CONFIG, string, None, importance=Importance.HIGH, group=_GROUP,
                documentation="A table of the session catalog (or catalog.db.table).")
    )  # fmt: skip


SINK_CONFIG_DEF = (
    _common(ConfigDef())
    .define(MODE_CONFIG, ConfigType.STRING, APPEND, importance=Importance.MEDIUM, group=_GROUP,
            documentation="The save mode. Only append: a stream never overwrites its target.")
    .define(PARTITION_BY_CONFIG, ConfigType.LIST, "", importance=Importance.MEDIUM,
            group=_GROUP, documentation="Columns (top-level value fields) to partition the "
            "files by (DataFrameWriter.partitionBy).")
    .define(VALUE_SCHEMA_CONFIG, ConfigType.STRING, None, importance=Importance.MEDIUM,
            group=_GROUP, documentation="A Spark DDL schema ('id BIGINT, name STRING') for "
            "schemaless values (JsonConverter with schemas.enable=false): maps become rows "
            "of it. Without it, such values need a Connect schema.")
    .define(FLUSH_SIZE_CONFIG, ConfigType.INT, 100_000, validator=Range.at_least(1),
            importance=Importance.HIGH, group=_GROUP,
            documentation="At most this many records per write (one Spark job).")
    .define(ROTATE_INTERVAL_MS_CONFIG, ConfigType.LONG, 1000, validator=Range.at_least(0),
            importance=Importance.HIGH, group=_GROUP,
            documentation="A write of fewer than flush.size records happens once this long "
            "has passed since the previous write.")
)  # fmt: skip

SOURCE_CONFIG_DEF = (
    _common(ConfigDef())
    .define(TOPIC_CONFIG, ConfigType.STRING, importance=Importance.HIGH, group=_GROUP,
            documentation="The topic the rows are written to.")
    .define(INCREMENTING_COLUMN_CONFIG, ConfigType.STRING, None, importance=Importance.HIGH,
            group=_GROUP, documentation="Table reads (spark.table, or spark.format=jdbc): a "
            "strictly increasing column; each poll reads the rows above the last one "
            "copied.")
    .define(SCHEMA_CONFIG, ConfigType.STRING, None, importance=Importance.MEDIUM,
            group=_GROUP, documentation="A Spark DDL schema for the reader (json/csv files): "
            "without it Spark infers one per batch.")
    .define(POLL_INTERVAL_MS_CONFIG, ConfigType.LONG, 1000, validator=Range.at_least(10),
            importance=Importance.MEDIUM, group=_GROUP,
            documentation="How often to look for new files or rows.")
    .define(MAX_FILES_CONFIG, ConfigType.INT, 1000, validator=Range.at_least(1),
            importance=Importance.LOW, group=_GROUP,
            documentation="At most this many new files per read.")
)  # fmt: skip


def spark_options(props: Mapping[str, str]) -> dict[str, str]:
    """The ``spark.option.*`` keys without their prefix."""
    return {k[len(OPTION_PREFIX) :]: v for k, v in props.items() if k.startswith(OPTION_PREFIX)}


def check_target(result: Config, props: Mapping[str, str], sink: bool) -> Config:
    """Cross-key rules added to ``result``'s values (Kafka's way: messages, not raises)."""
    values: dict[str, ConfigValue] = {v.name: v for v in result}
    fmt = (props.get(FORMAT_CONFIG) or "parquet").strip().lower()
    path, table = props.get(PATH_CONFIG), props.get(TABLE_CONFIG)
    if fmt == "jdbc":
        if path or table:
            values[PATH_CONFIG].add_error_message(
                "spark.format jdbc takes spark.option.url and spark.option.dbtable, not "
                "spark.path or spark.table"
            )
        for option in ("url", "dbtable"):
            if not props.get(OPTION_PREFIX + option):
                values[FORMAT_CONFIG].add_error_message(
                    f"spark.format jdbc needs {OPTION_PREFIX}{option}"
                )
        if (props.get(OPTION_PREFIX + "url") or "").lower().startswith("jdbc:mariadb:"):
            values[FORMAT_CONFIG].add_error_message(MARIADB_URL_MESSAGE)
    elif bool(path) == bool(table):
        values[PATH_CONFIG].add_error_message("Exactly one of spark.path and spark.table")
    if sink:
        mode = (props.get(MODE_CONFIG) or APPEND).strip().lower()
        if mode != APPEND:
            values[MODE_CONFIG].add_error_message(
                f"spark.mode {mode} is refused: a streaming sink only appends (an overwrite "
                "would drop what earlier batches wrote)"
            )
    elif (table or fmt == "jdbc") and not props.get(INCREMENTING_COLUMN_CONFIG):
        values[INCREMENTING_COLUMN_CONFIG].add_error_message(
            "A table source needs spark.incrementing.column"
        )
    return result


def source_partition(props: Mapping[str, str]) -> dict[str, str]:
    """The Connect source partition of a source's reads: its path, table or JDBC table
    (``spark.option.dbtable`` alone: the URL may carry credentials)."""
    for key in (PATH_CONFIG, TABLE_CONFIG):
        if props.get(key):
            return {key: props[key]}
    return {OPTION_PREFIX + "dbtable": props[OPTION_PREFIX + "dbtable"]}
