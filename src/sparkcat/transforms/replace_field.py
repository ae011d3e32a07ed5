"""ReplaceField: drop, keep or rename fields (Kafka's ``ReplaceField``).

Kafka 4.0 removed the deprecated ``blacklist``/``whitelist`` aliases of ``exclude``/``include``;
sparkcat still accepts them the way Kafka 3.x did: the new key wins when both are given.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, NamedTuple

from sparkcat.api.config import ConfigDef, ConfigType, Importance, LambdaValidator
from sparkcat.api.data import Field, Schema, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    SchemaUpdateCache,
    copy_schema_basics,
    define_replace_null_with_default,
    field_getter,
    java_list,
    require_map,
    require_struct,
)
from sparkcat.transforms._field_copy import FieldCopy

EXCLUDE_CONFIG = "exclude"
INCLUDE_CONFIG = "include"
RENAMES_CONFIG = "renames"
#: Deprecated aliases (Kafka 3.x; removed in Kafka 4.0).
BLACKLIST_CONFIG = "blacklist"
WHITELIST_CONFIG = "whitelist"

OVERVIEW_DOC = (
    "Filter or rename fields.<p/>Use the concrete transformation type designed for the record "
    "key (<code>org.apache.kafka.connect.transforms.ReplaceField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.ReplaceField$Value</code>)."
)
_PURPOSE = "field replacement"
_log = logging.getLogger(__name__)


def _validate_renames(name: str, value: Any) -> None:
    parse_rename_mappings(value)


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs as a dict; ConfigError with Kafka's message for a malformed pair."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        # Java's String.split drops trailing empty strings ("a:" has one part).
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise ConfigError(
                RENAMES_CONFIG, java_list(mappings), f"Invalid rename mapping: {mapping}"
            )
        renames[parts[0]] = parts[1]
    return renames


CONFIG_DEF = (
    ConfigDef()
    .define(
        EXCLUDE_CONFIG,
        ConfigType.LIST,
        [],
        importance=Importance.MEDIUM,
        documentation="Fields to exclude. This takes precedence over the fields to include.",
    )
    .define(
        BLACKLIST_CONFIG,
        ConfigType.LIST,
        None,
        importance=Importance.LOW,
        documentation=f"Deprecated. Use {EXCLUDE_CONFIG} instead.",
    )
    .define(
        INCLUDE_CONFIG,
        ConfigType.LIST,
        [],
        importance=Importance.MEDIUM,
        documentation="Fields to include. If specified, only these fields will be used.",
    )
    .define(
        WHITELIST_CONFIG,
        ConfigType.LIST,
        None,
        importance=Importance.LOW,
        documentation=f"Deprecated. Use {INCLUDE_CONFIG} instead.",
    )
    .define(
        RENAMES_CONFIG,
        ConfigType.LIST,
        [],
        validator=LambdaValidator.with_(
            _validate_renames,
            "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>",
        ),
        importance=Importance.MEDIUM,
        documentation="Field rename mappings.",
    )
)
define_replace_null_with_default(CONFIG_DEF)


def _translate_deprecated(configs: Mapping[str, Any]) -> dict[str, Any]:
    translated = {k: v for k, v in configs.items() if k not in (BLACKLIST_CONFIG, WHITELIST_CONFIG)}
    for target, alias in ((INCLUDE_CONFIG, WHITELIST_CONFIG), (EXCLUDE_CONFIG, BLACKLIST_CONFIG)):
        if alias not in configs:
            continue
        if target in configs:
            _log.error(
                "%s was configured, as well as the deprecated alias(es) %s.  Using the value of %s",
                target,
                alias,
                target,
            )
        else:
            _log.warning(
                "Configuration key %s is deprecated and may be removed in the future.  Please "
                "update your configuration to use %s instead.",
                alias,
                target,
            )
            translated[target] = configs[alias]
    return translated


class _Plan(NamedTuple):
    schema: Schema
    pairs: tuple[tuple[Field, Field], ...]  # (output field, input field)
    copy: FieldCopy


class ReplaceField(KeyValueTransformation):
    """Filters and renames the fields of a Struct or Map: ``exclude`` wins over ``include``; an
    empty ``include`` keeps every field; ``renames`` apply to the fields kept."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(_translate_deprecated(configs))
        self._exclude = frozenset(parsed[EXCLUDE_CONFIG])
        self._include = frozenset(parsed[INCLUDE_CONFIG])
        self._renames = parse_rename_mappings(parsed[RENAMES_CONFIG])
        self._replace_null = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._get = field_getter(self._replace_null)
        self._cache: SchemaUpdateCache[Schema, _Plan] = SchemaUpdateCache()

    def _keeps(self, name: str) -> bool:
        return name not in self._exclude and (not self._include or name in self._include)

    def apply(self, record: Any) -> Any:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            renames = self._renames
            updated = {
                renames.get(name, name): v
                for name, v in require_map(value, _PURPOSE).items()
                if self._keeps(name)
            }
            return self.new_record(record, None, updated)
        struct = value if value.__class__ is Struct else require_struct(value, _PURPOSE)
        schema = struct.schema
        cache = self._cache
        plan = (
            cache.last_value if schema is cache.last_key else cache.get_or_build(schema, self._plan)
        )
        copied = plan.copy.read(struct)
        if copied is not None:
            return self.new_record(
                record, plan.schema, Struct.from_valid_values(plan.schema, copied)
            )
        out = Struct(plan.schema)  # a null in a required field: put() raises Kafka's error
        get = self._get
        for out_field, in_field in plan.pairs:
            out.put(out_field, get(struct, in_field))
        return self.new_record(record, plan.schema, out)

    def _plan(self, schema: Schema) -> _Plan:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        kept = [field for field in schema.fields if self._keeps(field.name)]
        for field in kept:
            builder.field(self._renames.get(field.name, field.name), field.schema)
        updated = builder.build()
        return _Plan(
            updated,
            tuple(zip(updated.fields, kept, strict=True)),
            FieldCopy(kept, updated, self._replace_null),
        )

    def close(self) -> None:
        if hasattr(self, "_cache"):
            self._cache.clear()


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "ReplaceField", "parse_rename_mappings"]
