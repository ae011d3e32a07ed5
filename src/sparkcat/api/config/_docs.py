"""reStructuredText reference docs for a ConfigDef (part of ``sparkcat.api.config``).

The layout is Kafka's ``ConfigDef.toRst`` / ``toEnrichedRst``, so generated plugin docs read
like Kafka's. Internal keys are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sparkcat.api.config._types import Importance, convert_to_string

if TYPE_CHECKING:
    from sparkcat.api.config._def import ConfigKey

_IMPORTANCE_ORDER = {importance: i for i, importance in enumerate(Importance)}


def sorted_keys(keys: Iterable[ConfigKey], groups: Sequence[str]) -> list[ConfigKey]:
    """Keys in Kafka's docs order: ungrouped first, then by group (in order of first use),
    order in group, required before defaulted, importance, name."""
    group_order = {group: i for i, group in enumerate(groups)}

    def sort_key(key: ConfigKey) -> tuple[int, int, int, int, str]:
        group = -1 if key.group is None else group_order.get(key.group, len(group_order))
        return (
            group,
            key.order_in_group,
            1 if key.has_default() else 0,
            _IMPORTANCE_ORDER[key.importance],
            key.name,
        )

    return sorted(keys, key=sort_key)


def default_text(key: ConfigKey) -> str:
    """The "Default" column: ``null``, ``""`` for an empty value, else the rendered value."""
    text = convert_to_string(key.default, key.type)
    if text is None:
        return "null"
    return text if text else '""'


def _key_rst(key: ConfigKey) -> list[str]:
    lines = [f"``{key.name}``"]
    doc_lines = [line for line in key.documentation.split("\n") if line]
    for line in doc_lines:
        lines += [f"  {line}", ""]
    if not doc_lines:
        lines.append("")
    lines.append(f"  * Type: {key.type.value}")
    if key.has_default():
        lines.append(f"  * Default: {default_text(key)}")
    if key.validator is not None:
        lines.append(f"  * Valid Values: {key.validator}")
    lines.append(f"  * Importance: {key.importance.value}")
    return lines


def to_rst(keys: Iterable[ConfigKey], groups: Sequence[str]) -> str:
    """Every non-internal key as an RST definition list entry."""
    lines: list[str] = []
    for key in sorted_keys(keys, groups):
        if not key.internal_config:
            lines += [*_key_rst(key), ""]
    return "".join(line + "\n" for line in lines)


def to_enriched_rst(keys: Iterable[ConfigKey], groups: Sequence[str]) -> str:
    """:func:`to_rst` with group headings and each key's dependents."""
    lines: list[str] = []
    last_group = ""
    for key in sorted_keys(keys, groups):
        if key.internal_config:
            continue
        if key.group is not None:
            if key.group.lower() != last_group.lower():
                lines += [key.group, "^" * len(key.group), ""]
            last_group = key.group
        lines += _key_rst(key)
        if key.dependents:
            lines.append("  * Dependents: " + ", ".join(f"``{d}``" for d in key.dependents))
        lines.append("")
    return "".join(line + "\n" for line in lines)
