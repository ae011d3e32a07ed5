"""docs/embedded.md runs as written: its ``python`` blocks, in order, in one namespace, in
this process (its ``SparkSession.builder.getOrCreate()`` finds the test session), and as a
script of its own run by this environment's interpreter, as a user runs it (its own
SparkSession and embedded broker; no ``PYSPARK_PYTHON`` inherited from the test session).

The walkthrough is KIP-26's example in one process, and this is its test: FileStreamSource
-> topic; ``read_stream`` -> ``value * 2`` and a filter -> ``write_stream``; FileStreamSink
-> a file holding exactly the expected lines; a Struct written with JsonConverter read back
as typed columns; ``close()`` stops the write queries and leaves the session usable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.broker]

DOC = Path(__file__).resolve().parents[3] / "docs" / "embedded.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
SCRIPT_TIMEOUT_S = 600.0  # a cold JVM, broker and four queries on a busy machine

# Run before the last block (close): what reached the walkthrough's output topic.
READ_DOUBLED = """
from confluent_kafka import Consumer

consumer = Consumer({"bootstrap.servers": connect.bootstrap_servers, "group.id": "check",
                     "auto.offset.reset": "earliest"})
consumer.subscribe(["doubled"])
found = set()
deadline = time.monotonic() + 60
while len(found) < 5 and time.monotonic() < deadline:
    for message in consumer.consume(100, 0.5):
        if message.error() is None and message.value() is not None:
            found.add(int(message.value()))
consumer.close()
print("DOUBLED", sorted(found), flush=True)
"""


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


@pytest.mark.slow
def test_the_walkthrough_runs_as_a_script(tmp_path: Path) -> None:
    blocks = python_blocks(DOC.read_text())
    script = tmp_path / "walkthrough.py"
    script.write_text("\n".join([*blocks[:-1], READ_DOUBLED, blocks[-1]]))
    env = {**os.environ, "LOG_DIR": str(tmp_path)}
    for inherited in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):  # as a fresh shell has
        env.pop(inherited, None)
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=SCRIPT_TIMEOUT_S, start_new_session=True,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    assert "DOUBLED [12, 14, 16, 18, 20]" in run.stdout, output[-4000:]
