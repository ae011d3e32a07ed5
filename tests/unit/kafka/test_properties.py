from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.kafka.properties import load_properties, parse_properties


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("a=b", "a", "b"),
        ("a:b", "a", "b"),
        ("a b", "a", "b"),
        ("  a  =  b  ", "a", "b  "),
        ("a\t:\tb", "a", "b"),
        ("a = = b", "a", "= b"),
        ("key", "key", ""),
        ("a\\=b=c", "a=b", "c"),
        ("a\\ b c", "a b", "c"),
        ("tab=x\\ty", "tab", "x\ty"),
        ("u=\\u0041\\u00e9", "u", "Aé"),
        ("back=a\\\\", "back", "a\\"),
        ("other=\\q", "other", "q"),
    ],
)
def test_separators_and_escapes(line: str, key: str, value: str) -> None:
    assert parse_properties(line) == {key: value}


def test_comments_blank_lines_and_duplicates() -> None:
    text = "# comment\n! also\n\n   \nname=one\n  # indented comment\nname=two\n"
    assert parse_properties(text) == {"name": "two"}


def test_continuation_lines_drop_leading_whitespace() -> None:
    text = "list=a,\\\n    b,\\\r\n    c\nnext=1"
    assert parse_properties(text) == {"list": "a,b,c", "next": "1"}


def test_continuation_line_is_never_a_comment() -> None:
    assert parse_properties("a=x\\\n  #not a comment") == {"a": "x#not a comment"}


def test_even_backslashes_do_not_continue() -> None:
    assert parse_properties("a=x\\\\\nb=y") == {"a": "x\\", "b": "y"}


def test_malformed_unicode_escape() -> None:
    with pytest.raises(ConfigError, match="Malformed"):
        parse_properties("a=\\u12")


def test_load_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "w.properties"
    path.write_text("bootstrap.servers=embedded\nkey.converter=JsonConverter\n", encoding="utf-8")
    assert load_properties(path) == {
        "bootstrap.servers": "embedded",
        "key.converter": "JsonConverter",
    }
