"""docs/embedded.md runs as written: its ``python`` blocks, in order, in one namespace, in
this process (its ``SparkSession.builder.getOrCreate()`` finds the test session).

The walkthrough is KIP-26's example in one process, and this is its test: FileStreamSource
-> topic; ``read_stream`` -> ``value * 2`` and a filter -> ``write_stream``; FileStreamSink
-> a file holding exactly the expected lines; a Struct written with JsonConverter read back
as typed columns; ``close()`` stops the write queries and leaves the session usable."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.broker]

DOC = Path(__file__).resolve().parents[3] / "docs" / "embedded.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    return [match.group(1) for match in BLOCK.finditer(text)]


def test_the_doc_has_the_walkthrough() -> None:
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 6
    assert any("sparkcat.Connect(" in block for block in blocks)


@pytest.mark.slow
def test_the_walkthrough_runs(spark: Any) -> None:
    namespace: dict[str, Any] = {"__name__": "walkthrough"}
    try:
        for index, block in enumerate(python_blocks(DOC.read_text())):
            code = compile(block, f"{DOC.name}[block {index}]", "exec")
            exec(code, namespace)
    finally:
        connect = namespace.get("connect")
        if connect is not None:
            connect.close()
