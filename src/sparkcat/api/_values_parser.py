"""The string parser behind :func:`sparkcat.api.values.parse_string` (Kafka's ``ValueParser``).

Private module. The tokenizer splits on the unescaped delimiters ``: , { } [ ] "``; the value
parser then reads literals, numbers, ISO temporal literals, arrays and maps, falling back to the
whole text as a STRING as Kafka does.
"""

from __future__ import annotations

import datetime
import decimal
import re
from typing import Any

from sparkcat.api._java_format import to_float32
from sparkcat.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from sparkcat.api.errors import DataError

_DELIMITERS = frozenset(':,{}[]"')
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z\Z")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z\Z")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def parse_big_decimal(text: str) -> decimal.Decimal | None:
    """``new BigDecimal(text)``, or ``None`` where Java throws NumberFormatException."""
    if not _NUMBER.match(text):
        return None
    return decimal.Decimal(text)


class Tokenizer:
    """Kafka's ``Values.Parser``: a rewindable stream of tokens over ``original``."""

    def __init__(self, original: str) -> None:
        self.original = original
        self._index = 0
        self._next: str | None = None
        self.previous: str | None = None

    def mark(self) -> int:
        return self._index - (len(self._next) if self._next is not None else 0)

    def rewind_to(self, position: int) -> None:
        self._index = position
        self._next = None
        self.previous = None

    def has_next(self) -> bool:
        return self._next is not None or self._index < len(self.original)

    def next(self) -> str:
        if self._next is not None:
            self.previous, self._next = self._next, None
        else:
            self.previous = self._consume()
        return self.previous

    def next_n(self, count: int) -> str | None:
        start = self.mark()
        for _ in range(count):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self._index]

    def _consume(self) -> str:
        text, start = self.original, self._index
        escaped = False
        index = start
        while index < len(text):
            char = text[index]
            if char == "\\":
                escaped = not escaped
            elif char in _DELIMITERS and not escaped:
                if start < index:
                    self._index = index
                    return text[start:index]
                self._index = index + 1
                return char
            else:
                escaped = False
            index += 1
        self._index = index
        return text[start:index]

    def can_consume(self, expected: str) -> bool:
        if self._next is None:
            if not self.has_next():
                return False
            self._next = self._consume()
        while not self._next.strip() and self._index < len(self.original):
            self._next = self._consume()
        if self._next.strip() == expected:
            self._next = None
            return True
        return False


class ValueParser:
    """Kafka's ``Values.ValueParser`` over one string."""

    def __init__(self, original: str) -> None:
        self.parser = Tokenizer(original)

    def _single_token_literal(self, embedded: bool, literal: str) -> bool:
        start = self.parser.mark()
        if self.parser.can_consume(literal) and (embedded or not self.parser.has_next()):
            return True
        self.parser.rewind_to(start)
        return False

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        parser = self.parser
        if not parser.has_next():
            return None
        if embedded and parser.can_consume('"'):
            return self._quoted_string()
        if self._single_token_literal(embedded, "null"):
            return None
        if self._single_token_literal(embedded, "true"):
            return SchemaAndValue(BOOLEAN_SCHEMA, True)
        if self._single_token_literal(embedded, "false"):
            return SchemaAndValue(BOOLEAN_SCHEMA, False)
        start = parser.mark()
        try:
            if parser.can_consume("["):
                return self._array()
            if parser.can_consume("{"):
                return self._map()
        except DataError:
            parser.rewind_to(start)
        token = parser.next()
        if not token.strip():
            return SchemaAndValue(STRING_SCHEMA, token)
        return self._next_token(embedded, token.strip())

    def _next_token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        if first.isdigit():
            temporal = self._multiple_tokens_as_temporal(token)
            if temporal is not None:
                return temporal
        if first.isdigit() or first in "+-":
            number = parse_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(STRING_SCHEMA, self.parser.original)

    def _quoted_string(self) -> SchemaAndValue:
        parts: list[str] = []
        while self.parser.has_next():
            if self.parser.can_consume('"'):
                break
            parts.append(self.parser.next())
        content = "".join(parts)
        temporal = parse_temporal(content)
        return temporal if temporal is not None else SchemaAndValue(STRING_SCHEMA, content)

    def _array(self) -> SchemaAndValue:
        parser = self.parser
        result: list[Any] = []
        merger = SchemaMerger()
        while parser.has_next():
            if parser.can_consume("]"):
                if merger.common is None:
                    return SchemaAndValue(Schema(Type.ARRAY), result)  # Kafka's arrayOfNull
                schema = SchemaBuilder.array(merger.common).build()
                return SchemaAndValue(schema, [_convert(merger.common, v) for v in result])
            if parser.can_consume(","):
                raise DataError(f"Unable to parse an empty array element: {parser.original}")
            element = self.parse(True)
            merger.merge(element)
            result.append(element.value if element is not None else None)
            position = parser.mark()
            if parser.can_consume("]"):
                parser.rewind_to(position)
            elif not parser.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if parser.previous == ",":
            raise DataError(f"Array is missing element after ',': {parser.original}")
        raise DataError(f"Array is missing terminating ']': {parser.original}")

    def _map(self) -> SchemaAndValue:
        parser = self.parser
        result: dict[Any, Any] = {}
        keys, values = SchemaMerger(), SchemaMerger()
        while parser.has_next():
            if parser.can_consume("}"):
                return _map_result(keys.common, values.common, result)
            if parser.can_consume(","):
                raise DataError(
                    f"Unable to parse a map entry with no key or value: {parser.original}"
                )
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError(f"Map entry may not have a null key: {parser.original}")
            if not parser.can_consume(":"):
                raise DataError(f"Map entry is missing ':' at {parser._index} in {parser.original}")
            value = self.parse(True)
            result[_hashable(key.value)] = value.value if value is not None else None
            parser.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if parser.previous == ",":
            raise DataError(f"Map is missing element after ',': {parser.original}")
        raise DataError(f"Map is missing terminating '}}': {parser.original}")

    def _multiple_tokens_as_temporal(self, token: str) -> SchemaAndValue | None:
        # Unescaped colons split times into five tokens: try them joined first.
        position = self.parser.mark()
        remainder = self.parser.next_n(4)
        if remainder is not None:
            temporal = parse_temporal(token + remainder)
            if temporal is not None:
                return temporal
        self.parser.rewind_to(position)
        return parse_temporal(token)


def _hashable(key: Any) -> Any:
    # Kafka allows list/map keys; Python dicts need hashable keys.
    if isinstance(key, list):
        return tuple(key)
    if isinstance(key, dict):
        raise DataError("Map keys that are maps are not supported")
    return key


def _map_result(
    key_schema: Schema | None, value_schema: Schema | None, result: dict[Any, Any]
) -> SchemaAndValue:
    if key_schema is not None and value_schema is not None:
        schema = SchemaBuilder.map(key_schema, value_schema).build()
        aligned = {_convert(key_schema, k): _convert(value_schema, v) for k, v in result.items()}
        return SchemaAndValue(schema, aligned)
    if key_schema is not None:
        schema = Schema(Type.MAP, key_schema=key_schema)  # Kafka's mapWithNullValues
        return SchemaAndValue(schema, {_convert(key_schema, k): v for k, v in result.items()})
    return SchemaAndValue(Schema(Type.MAP), result)  # Kafka's mapOfNull


def _convert(schema: Schema, value: Any) -> Any:
    from sparkcat.api.values import convert_to

    return convert_to(schema, None, value)


def parse_number(token: str) -> SchemaAndValue | None:
    """Kafka's ``parseAsNumber``; ``None`` where ``new BigDecimal(token)`` fails."""
    number = parse_big_decimal(token)
    if number is None:
        return None
    exponent = number.as_tuple().exponent
    scale = -exponent if isinstance(exponent, int) else 0
    # adjusted() >= 19 is beyond the long range; skip int() of huge exponents such as 1e999999.
    if number.adjusted() < 19 and number == number.to_integral_value():
        integral = int(number)
        if _LONG_MIN <= integral <= _LONG_MAX:
            for schema, bits in ((INT8_SCHEMA, 8), (INT16_SCHEMA, 16), (INT32_SCHEMA, 32)):
                if -(1 << (bits - 1)) <= integral < (1 << (bits - 1)):
                    return SchemaAndValue(schema, integral)
            return SchemaAndValue(INT64_SCHEMA, integral)
    as_double = float(number)
    single = to_float32(as_double)
    if scale != 0 and abs(single) != float("inf"):
        return SchemaAndValue(FLOAT32_SCHEMA, single)
    if scale != 0 and abs(as_double) != float("inf"):
        return SchemaAndValue(FLOAT64_SCHEMA, as_double)
    return SchemaAndValue(Decimal.schema(scale), number)


def parse_temporal(token: str | None) -> SchemaAndValue | None:
    """An ISO-8601 date (``yyyy-MM-dd``), time (``HH:mm:ss.SSSZ``) or timestamp, or None."""
    if token is None:
        return None
    token = token.replace("\\:", ":")
    try:
        if match := _TIME.match(token):
            h, m, s, ms = (int(g) for g in match.groups())
            return SchemaAndValue(Time.SCHEMA, datetime.time(h, m, s, ms * 1000))
        if match := _TIMESTAMP.match(token):
            y, mo, d, h, m, s, ms = (int(g) for g in match.groups())
            moment = datetime.datetime(y, mo, d, h, m, s, ms * 1000, tzinfo=datetime.UTC)
            return SchemaAndValue(Timestamp.SCHEMA, moment)
        if match := _DATE.match(token):
            y, mo, d = (int(g) for g in match.groups())
            return SchemaAndValue(Date.SCHEMA, datetime.date(y, mo, d))
    except ValueError:
        return None  # out-of-range fields (Java's lenient parser would roll them over)
    return None


class SchemaMerger:
    """The common schema of the elements seen so far (``None`` until one, or if none fits)."""

    def __init__(self) -> None:
        self.common: Schema | None = None
        self._compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self._compatible:
            return
        if self.common is None:
            self.common = latest.schema
        else:
            self.common = merge_schemas(self.common, latest.schema)
            self._compatible = self.common is not None


_NUMERIC_ORDER = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)


def merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    """Kafka's ``mergeSchemas``: widen numbers, keep equal schemas, else ``None``."""
    if previous.type is not new.type:
        if previous.type in _NUMERIC_ORDER and new.type in _NUMERIC_ORDER:
            wider = _NUMERIC_ORDER.index(new.type) > _NUMERIC_ORDER.index(previous.type)
            return new if wider else previous
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


_INFER_BY_CLASS: dict[type, Schema] = {
    str: STRING_SCHEMA,
    bool: BOOLEAN_SCHEMA,
    float: FLOAT64_SCHEMA,
    bytes: BYTES_SCHEMA,
    bytearray: BYTES_SCHEMA,
    memoryview: BYTES_SCHEMA,
}


def infer_schema(value: Any) -> Schema | None:
    """Kafka's ``Values.inferSchema`` (Python ``int`` → INT64, ``float`` → FLOAT64)."""
    if type(value) in _INFER_BY_CLASS:
        return _INFER_BY_CLASS[type(value)]
    if isinstance(value, int) and not isinstance(value, bool):
        return INT64_SCHEMA
    if isinstance(value, list):
        element = _detect(value)
        return SchemaBuilder.array(element).build() if element is not None else None
    if isinstance(value, dict):
        key, item = _detect(value.keys()), _detect(value.values())
        if key is None or item is None:
            return None
        return SchemaBuilder.map(key, item).build()
    if isinstance(value, Struct):
        return value.schema
    return None


def _detect(values: Any) -> Schema | None:
    known: Type | None = None
    optional = False
    for value in values:
        if value is None:
            optional = True
            continue
        schema = infer_schema(value)
        if schema is None or (known is not None and known is not schema.type):
            return None
        known = schema.type
    if known is None:
        return None
    builder = SchemaBuilder.type(known)
    return (builder.optional() if optional else builder).build()
