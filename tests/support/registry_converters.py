"""What the Schema Registry converters' tests share: the registry clients closed after each
test, a fresh topic, Confluent's message header, the registry's subject versions and a
Struct-free form of Connect values.

The converters' test directories take the fixtures through their ``conftest.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, TypeVar

import httpx
import pytest

from sparkcat.api.data import Struct
from sparkcat.converters.schema_registry.client import close_clients
from sparkcat.converters.schema_registry.converter import SchemaRegistryConverter

C = TypeVar("C", bound=SchemaRegistryConverter[Any, Any, Any])


@pytest.fixture(autouse=True)
def close_registry_clients() -> Iterator[None]:
    """Each test gets new registry clients (they cache schemas per process)."""
    yield
    close_clients()


@pytest.fixture
def topic() -> str:
    return f"topic-{uuid.uuid4().hex[:10]}"


def configured(converter: C, url: str, is_key: bool = False, **configs: Any) -> C:
    """``converter`` configured for the registry at ``url``."""
    converter.configure({"schema.registry.url": url, **configs}, is_key)
    return converter


def header(schema_id: int) -> bytes:
    """Confluent's magic byte and schema id, as an independent oracle of the wire format."""
    return b"\x00" + schema_id.to_bytes(4, "big")


def versions(url: str, subject: str) -> list[int]:
    return list(httpx.get(f"{url}/subjects/{subject}/versions").json())


def plain(value: Any) -> Any:
    """Struct-free form of a Connect value, for comparing values across schema objects."""
    if isinstance(value, Struct):
        return {f.name: plain(value.get(f)) for f in value.schema.fields}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
