"""Config keys of ``io.debezium.connector.postgresql.PostgresConnector`` (Debezium's
``PostgresConnectorConfig``): the common keys plus PostgreSQL's own, names and defaults
verbatim."""

from __future__ import annotations

from dataclasses import dataclass
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

DATABASE_DBNAME = "database.dbname"
DATABASE_SSLMODE = "database.sslmode"
PLUGIN_NAME = "plugin.name"
SLOT_NAME = "slot.name"
SLOT_DROP_ON_STOP = "slot.drop.on.stop"
SLOT_MAX_RETRIES = "slot.max.retries"
SLOT_RETRY_DELAY_MS = "slot.retry.delay.ms"
PUBLICATION_NAME = "publication.name"
PUBLICATION_AUTOCREATE_MODE = "publication.autocreate.mode"
SCHEMA_INCLUDE_LIST = "schema.include.list"
SCHEMA_EXCLUDE_LIST = "schema.exclude.list"
STATUS_UPDATE_INTERVAL_MS = "status.update.interval.ms"
MONEY_FRACTION_DIGITS = "money.fraction.digits"
INTERVAL_HANDLING_MODE = "interval.handling.mode"

SNAPSHOT_INITIAL = "initial"
SNAPSHOT_ALWAYS = "always"
SNAPSHOT_INITIAL_ONLY = "initial_only"
SNAPSHOT_NO_DATA = "no_data"
SNAPSHOT_NEVER = "never"
SNAPSHOT_WHEN_NEEDED = "when_needed"
SNAPSHOT_MODES = (
    SNAPSHOT_INITIAL,
    SNAPSHOT_ALWAYS,
    SNAPSHOT_INITIAL_ONLY,
    SNAPSHOT_NO_DATA,
    SNAPSHOT_NEVER,
    SNAPSHOT_WHEN_NEEDED,
)
AUTOCREATE_ALL_TABLES = "all_tables"
AUTOCREATE_DISABLED = "disabled"
AUTOCREATE_FILTERED = "filtered"

SNAPSHOT_EPOCH = "snapshot.epoch"
"""Task config written by the connector: the committed offset (JSON) when the connector
started, so ``snapshot.mode=always`` snapshots once per connector start, not once per lease."""


def _postgres_def() -> ConfigDef:
    config = common.common_config_def("adaptive", 5432)
    return (
        config.define(DATABASE_DBNAME, ConfigType.STRING, importance=Importance.HIGH,
                      documentation="The database to capture changes from.")
        .define(DATABASE_SSLMODE, ConfigType.STRING, "prefer",
                CaseInsensitiveValidString.in_("disable", "allow", "prefer", "require",
                                               "verify-ca", "verify-full"),
                importance=Importance.MEDIUM, documentation="libpq's sslmode.")
        .define(PLUGIN_NAME, ConfigType.STRING, "pgoutput",
                CaseInsensitiveValidString.in_("pgoutput"), importance=Importance.MEDIUM,
                documentation="The logical decoding plugin: only PostgreSQL's built-in "
                "pgoutput.")
        .define(SLOT_NAME, ConfigType.STRING, "debezium", importance=Importance.MEDIUM,
                documentation="The replication slot (lower-case letters, digits, _).")
        .define(SLOT_DROP_ON_STOP, ConfigType.BOOLEAN, False, importance=Importance.MEDIUM,
                documentation="Drop the slot when the connector stops.")
        .define(SLOT_MAX_RETRIES, ConfigType.INT, 6, Range.at_least(1),
                importance=Importance.LOW,
                documentation="Attempts to take the slot while another consumer holds it.")
        .define(SLOT_RETRY_DELAY_MS, ConfigType.LONG, 10_000, Range.at_least(0),
                importance=Importance.LOW, documentation="Wait between those attempts.")
        .define(PUBLICATION_NAME, ConfigType.STRING, "dbz_publication",
                importance=Importance.MEDIUM, documentation="The pgoutput publication.")
        .define(PUBLICATION_AUTOCREATE_MODE, ConfigType.STRING, AUTOCREATE_ALL_TABLES,
                CaseInsensitiveValidString.in_(AUTOCREATE_ALL_TABLES, AUTOCREATE_DISABLED,
                                               AUTOCREATE_FILTERED),
                importance=Importance.LOW,
                documentation="Create the publication for all tables, for the captured "
                "tables only (filtered), or not at all (disabled: it must exist).")
        .define(SCHEMA_INCLUDE_LIST, ConfigType.LIST, "", importance=Importance.HIGH,
                documentation="Anchored regular expressions of the schemas to capture.")
        .define(SCHEMA_EXCLUDE_LIST, ConfigType.LIST, "", importance=Importance.HIGH,
                documentation="Anchored regular expressions of the schemas not to capture.")
        .define(common.SNAPSHOT_MODE, ConfigType.STRING, SNAPSHOT_INITIAL,
                CaseInsensitiveValidString.in_(*SNAPSHOT_MODES), importance=Importance.HIGH,
                documentation="When to snapshot: initial, always, initial_only, no_data "
                "(never), when_needed.")
        .define(STATUS_UPDATE_INTERVAL_MS, ConfigType.INT, 10_000, Range.at_least(1),
                importance=Importance.LOW,
                documentation="How often the replication stream reports its position.")
        .define(MONEY_FRACTION_DIGITS, ConfigType.SHORT, 2, importance=Importance.LOW,
                documentation="Scale of money values as decimals.")
        .define(INTERVAL_HANDLING_MODE, ConfigType.STRING, "numeric",
                CaseInsensitiveValidString.in_("numeric"), importance=Importance.LOW,
                documentation="Intervals as io.debezium.time.MicroDuration (numeric).")
        .define_internal(SNAPSHOT_EPOCH, ConfigType.STRING, "")
    )  # fmt: skip


CONFIG_DEF = _postgres_def()


@dataclass(frozen=True)
class ConnectionSettings:
    """What a libpq connection of the connector needs."""

    host: str
    port: int
    user: str | None
    password: str | None
    dbname: str
    sslmode: str

    @classmethod
    def of(cls, config: AbstractConfig) -> ConnectionSettings:
        password: Any = config.get(common.DATABASE_PASSWORD)
        if password is not None and hasattr(password, "value"):
            password = password.value
        return cls(
            str(config.get(common.DATABASE_HOSTNAME)),
            int(config.get(common.DATABASE_PORT)),
            config.get(common.DATABASE_USER),
            None if password is None else str(password),
            str(config.get(DATABASE_DBNAME)),
            str(config.get(DATABASE_SSLMODE)).lower(),
        )


__all__ = ["CONFIG_DEF", "ConnectionSettings"]
