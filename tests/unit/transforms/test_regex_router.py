from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.transforms.regex_router import RegexRouter


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(.*)-(\\d+)", "$1_x_$2", "orders-12", "orders_x_12"),
        ("(?<base>[a-z]+)\\.v1", "${base}", "users.v1", "users"),
        ("orders", "new", "orders-1", "orders-1"),  # must match the whole topic
        ("a|ab", "X", "ab", "Xb"),  # Java's replaceFirst finds the leftmost, shorter match
        ("(.*)", "\\$$1", "t", "$t"),
    ],
)
def test_routes(side, apply, regex, replacement, topic, expected):
    smt = RegexRouter()
    smt.configure({"regex": regex, "replacement": replacement})
    record = side.record(None, {"a": 1}, topic=topic)
    out = apply(smt, record)
    assert out.topic == expected
    if topic == expected:
        assert out is record


def test_config_errors():
    with pytest.raises(
        ConfigError, match="Invalid value \\( for configuration regex: Invalid regex"
    ):
        RegexRouter().configure({"regex": "(", "replacement": "x"})
    with pytest.raises(ConfigError, match="No group 2"):
        RegexRouter().configure({"regex": "(a)", "replacement": "$2"})
