"""Copying field values from Structs of one schema into a derived schema's values list,
without per-field validation (for SMTs that rebuild structs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sparkcat.api.data import Field, Schema, Struct


class FieldCopy:
    """Reads chosen fields of Structs of one schema into a values list for a derived schema.

    Built once per (input schema, output schema) pair: ``sources`` are the input fields whose
    values fill the output's fields ``0 .. len(sources) - 1``, which must have the same schemas
    (so a value valid for the input field is valid for the output field). :meth:`read` applies
    the field defaults like :func:`field_getter` does and returns a list for
    :meth:`Struct.from_valid_values`, or ``None`` when a copied value would be a null in a
    required output field: the caller then takes its field-by-field ``put`` path, which raises
    Kafka's error for it. Nothing is looked up by name per record.
    """

    __slots__ = ("_defaults", "_pick", "_required", "_tuple")

    def __init__(
        self,
        sources: Sequence[Field],
        output_schema: Schema,
        replace_null_with_default: bool,
    ) -> None:
        indices = [field.index for field in sources]
        # A run of adjacent fields is one slice (a new list); anything else a tuple to copy.
        self._pick: Callable[[Sequence[Any]], Any]
        self._tuple = False
        if not indices:
            self._pick = itemgetter(slice(0, 0))
        elif indices == list(range(indices[0], indices[0] + len(indices))):
            self._pick = itemgetter(slice(indices[0], indices[0] + len(indices)))
        else:
            self._pick = itemgetter(*indices)
            self._tuple = True
        outputs = output_schema.fields[: len(indices)]
        self._defaults = tuple(
            (i, field.schema.default_value)
            for i, field in enumerate(sources)
            if replace_null_with_default and field.schema.default_value is not None
        )
        required = [i for i, field in enumerate(outputs) if not field.schema.optional]
        # itemgetter of one index returns the item itself, not a tuple: wrap it.
        self._required: Callable[[list[Any]], Any] | None = (
            None
            if not required
            else itemgetter(slice(required[0], required[0] + 1))
            if len(required) == 1
            else itemgetter(*required)
        )

    def read(self, struct: Struct) -> list[Any] | None:
        """The output values read from ``struct`` (of the input schema), or ``None`` (see class)."""
        picked = self._pick(struct.values)
        out: list[Any] = list(picked) if self._tuple else picked
        for i, default in self._defaults:
            if out[i] is None:
                out[i] = default
        required = self._required
        if required is not None and None in required(out):
            return None
        return out


__all__ = ["FieldCopy"]
