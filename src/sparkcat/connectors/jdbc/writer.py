"""How sink records become rows: primary key and value columns per ``pk.mode`` (Confluent's
``FieldsMetadata``), statements per ``insert.mode`` and the table's structure (``auto.create``,
``auto.evolve``, Confluent's ``DbStructure``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from sparkcat.api.data import Schema, Type
from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.jdbc import types
from sparkcat.connectors.jdbc.dialect import Dialect, TableId

log = logging.getLogger(__name__)

KAFKA_PK_DEFAULTS = ("__connect_topic", "__connect_partition", "__connect_offset")
Getter = Callable[[SinkRecord], Any]


@dataclass(frozen=True, slots=True)
class Column:
    """One column written from each record."""

    name: str
    schema: Schema
    get: Getter
    is_key: bool


@dataclass(frozen=True, slots=True)
class SinkSettings:
    insert_mode: str
    pk_mode: str
    pk_fields: tuple[str, ...]
    fields_whitelist: frozenset[str]
    auto_create: bool
    auto_evolve: bool
    delete_enabled: bool
    db_timezone: str


def _value_index(i: int) -> Getter:
    return lambda r: r.value.values[i]


def _key_index(i: int) -> Getter:
    return lambda r: r.key.values[i]


def columns_for(
    table: str, s: SinkSettings, key_schema: Schema | None, value_schema: Schema | None
) -> list[Column]:
    """Key columns first, then value columns (Confluent's ``FieldsMetadata.extract``)."""
    from sparkcat.api.data import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA

    keys: list[Column] = []
    mode = s.pk_mode
    if value_schema is not None and value_schema.type is not Type.STRUCT:
        raise ConnectError("Value schema must be of type Struct")
    if mode == "kafka":
        names = s.pk_fields or KAFKA_PK_DEFAULTS
        if len(names) != 3:
            raise ConnectError(
                f"PK mode for table '{table}' is kafka so there should either be no field names "
                f"defined for defaults {list(KAFKA_PK_DEFAULTS)} to be applicable, or exactly 3, "
                f"defined fields are: {list(names)}"
            )
        keys = [
            Column(names[0], STRING_SCHEMA, lambda r: r.topic, True),
            Column(names[1], INT32_SCHEMA, lambda r: r.kafka_partition, True),
            Column(names[2], INT64_SCHEMA, lambda r: r.kafka_offset, True),
        ]
    elif mode == "record_key":
        if key_schema is None:
            raise ConnectError(
                f"PK mode for table '{table}' is record_key, but record key schema is missing"
            )
        if key_schema.type is Type.STRUCT:
            wanted = s.pk_fields or tuple(f.name for f in key_schema.fields)
            for name in wanted:
                field = key_schema.field(name)
                if field is None:
                    raise ConnectError(
                        f"PK mode for table '{table}' is record_key with configured PK fields "
                        f"{list(s.pk_fields)}, but record key schema does not contain field: "
                        f"{name}"
                    )
                keys.append(Column(name, field.schema, _key_index(field.index), True))
        elif key_schema.type in (Type.MAP, Type.ARRAY):
            raise ConnectError(
                "Key schema must be primitive type or Struct, but is of type: "
                f"{key_schema.type.name}"
            )
        else:
            if len(s.pk_fields) != 1:
                raise ConnectError(
                    "Need exactly one PK column defined since the key schema for records is a "
                    f"primitive type, defined columns are: {list(s.pk_fields)}"
                )
            keys = [Column(s.pk_fields[0], key_schema, lambda r: r.key, True)]
    elif mode == "record_value":
        if value_schema is None:
            raise ConnectError(
                f"PK mode for table '{table}' is record_value, but record value schema is missing"
            )
        wanted = s.pk_fields or tuple(f.name for f in value_schema.fields)
        for name in wanted:
            field = value_schema.field(name)
            if field is None:
                raise ConnectError(
                    f"PK mode for table '{table}' is record_value with configured PK fields "
                    f"{list(s.pk_fields)}, but record value schema does not contain field: "
                    f"{name}"
                )
            keys.append(Column(name, field.schema, _value_index(field.index), True))
    key_names = {c.name for c in keys}
    values: list[Column] = []
    if value_schema is not None:
        for field in value_schema.fields:
            if field.name in key_names:
                continue
            if s.fields_whitelist and field.name not in s.fields_whitelist:
                continue
            values.append(Column(field.name, field.schema, _value_index(field.index), False))
    if not keys and not values:
        raise ConnectError(f"No fields found using key and value schemas for table: {table}")
    return keys + values


class TableStructure:
    """Known columns per table, created or evolved on demand; one per task."""

    _lock = threading.Lock()

    def __init__(self, engine: Engine, dialect: Dialect, settings: SinkSettings) -> None:
        self.engine = engine
        self.dialect = dialect
        self.settings = settings
        self._columns: dict[TableId, set[str]] = {}

    def _describe(self, table: TableId) -> set[str] | None:
        with self.engine.connect() as conn:
            inspector = sa.inspect(conn)
            owner = table.schema or table.catalog
            if not inspector.has_table(table.name, schema=owner):
                return None
            return {c["name"] for c in inspector.get_columns(table.name, schema=owner)}

    def ensure(self, table: TableId, columns: Sequence[Column]) -> None:
        """Create the table or add missing columns as the settings allow, else fail."""
        known = self._columns.get(table)
        if known is not None and all(c.name in known for c in columns):
            return
        with self._lock:
            known = self._describe(table)
            sql_table = self.dialect.table(table)
            if known is None:
                if not self.settings.auto_create:
                    raise ConnectError(
                        f"Table {table.fqn} is missing and auto-creation is disabled"
                    )
                self._create(table, sql_table, columns)
                known = self._describe(table) or set()
            missing = [c for c in columns if c.name not in known]
            if missing:
                self._evolve(table, sql_table, missing)
                known = self._describe(table) or set()
            self._columns[table] = known

    def _create(self, table: TableId, sql_table: str, columns: Sequence[Column]) -> None:
        name = self.dialect.name
        defs = [
            (c.name, types.sql_type(name, c.schema, c.is_key), c.schema.optional and not c.is_key)
            for c in columns
        ]
        sql = self.dialect.create_table(sql_table, defs, [c.name for c in columns if c.is_key])
        log.info("Creating table %s: %s", table.fqn, sql)
        try:
            with self.engine.begin() as conn:
                conn.exec_driver_sql(sql)
        except sa.exc.DBAPIError:
            # Another task may have created it meanwhile.
            if self._describe(table) is None:
                raise

    def _evolve(self, table: TableId, sql_table: str, missing: Sequence[Column]) -> None:
        names = [c.name for c in missing]
        if not self.settings.auto_evolve:
            raise ConnectError(
                f"Table {table.fqn} is missing fields ({names}) and auto-evolution is disabled"
            )
        for column in missing:
            if not column.schema.optional and column.schema.default_value is None:
                raise ConnectError(
                    f"Cannot ALTER TABLE {table.fqn} to add missing field {column.name}, as the "
                    "field is not optional and does not have a default value"
                )
        with self.engine.begin() as conn:
            for column in missing:
                sql_type = types.sql_type(self.dialect.name, column.schema)
                sql = self.dialect.add_column(sql_table, column.name, sql_type)
                log.info("Amending table %s: %s", table.fqn, sql)
                conn.exec_driver_sql(sql)


__all__ = ["Column", "SinkSettings", "TableStructure", "columns_for"]
