"""Include/exclude lists (anchored, case-insensitive) and message.key.columns."""

from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter


def test_include_list_is_anchored_and_case_insensitive() -> None:
    tables = NameFilter.of("public.cust.*,inventory\\.orders", "")
    assert tables.matches("public.customers") and tables.matches("PUBLIC.Customers")
    assert tables.matches("inventory.orders")
    assert not tables.matches("xpublic.customers") and not tables.matches("inventory.orders2")


def test_exclude_list_and_no_list() -> None:
    assert not NameFilter.of("", "public\\.audit.*").matches("public.audit_log")
    assert NameFilter.of("", "public\\.audit.*").matches("public.orders")
    assert NameFilter.of("", "").matches("anything.at_all")


def test_message_key_columns() -> None:
    keys = KeyColumns.parse("inventory.customers:pk1,pk2;(.*).orders:pk3")
    assert keys.for_table("inventory.customers") == ("pk1", "pk2")
    assert keys.for_table("shop.orders") == ("pk3",)
    assert keys.for_table("shop.items") is None


@pytest.mark.parametrize("value", ["customers", "a.b:", ":id"])
def test_malformed_message_key_columns(value: str) -> None:
    with pytest.raises(ConfigError, match=r"message\.key\.columns"):
        KeyColumns.parse(value)
