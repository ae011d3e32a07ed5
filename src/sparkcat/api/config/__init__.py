"""Configuration definitions, parsing and validation: Kafka's ``ConfigDef`` and friends.

A plugin describes its settings with a :class:`ConfigDef`; :meth:`ConfigDef.parse` turns a map
of (usually string) settings into typed values with Kafka's coercion rules and messages,
raising :class:`~sparkcat.api.errors.ConfigError`; :meth:`ConfigDef.validate_all` collects
every problem instead of stopping at the first, for the REST ``config/validate`` endpoint.
:class:`AbstractConfig` parses at construction and offers typed getters.

Value types (:class:`ConfigType`) and their Python values: BOOLEAN ``bool``, STRING ``str``,
INT/SHORT/LONG ``int``, DOUBLE ``float``, LIST ``list`` (of ``str`` when parsed from a string),
CLASS ``str`` (a class name; resolving it is the runtime's plugin registry's job; a Python class
given as a value is stored as ``module:QualName``), PASSWORD :class:`Password`.

One deliberate difference from Kafka: a validator is not applied to a ``None`` default (Kafka
applies it, which makes e.g. ``ValidString`` unusable with an optional key); it is applied to a
``None`` that is explicitly set.
"""

from __future__ import annotations

from sparkcat.api.config._abstract_config import AbstractConfig
from sparkcat.api.config._def import (
    NO_DEFAULT_VALUE,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Recommender,
)
from sparkcat.api.config._types import ConfigType, Importance, Password, Width
from sparkcat.api.config._validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    Validator,
    ValidList,
    ValidString,
)

__all__ = [
    "NO_DEFAULT_VALUE",
    "AbstractConfig",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Password",
    "Range",
    "Recommender",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
]
