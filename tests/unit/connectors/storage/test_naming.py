"""Object names as Confluent's TopicPartitionWriter builds them."""

from __future__ import annotations

import pytest

from sparkcat.connectors.storage.naming import Naming


@pytest.mark.parametrize(
    ("width", "offset", "expected"),
    [(10, 0, "0000000000"), (10, 42, "0000000042"), (3, 12345, "12345"), (0, 7, "7")],
)
def test_zero_padding(width: int, offset: int, expected: str) -> None:
    naming = Naming("topics", "/", "+", width, ".json")
    key = naming.file_key("orders/partition=3", "orders", 3, offset)
    assert key == f"topics/orders/partition=3/orders+3+{expected}.json"


def test_custom_delimiters_and_blank_topics_dir() -> None:
    naming = Naming(" ", "/", "#", 4, ".snappy.parquet")
    assert naming.file_key("t/x=1", "t", 0, 5) == "t/x=1/t#0#0005.snappy.parquet"
