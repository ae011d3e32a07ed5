"""AvroConverter throughput against fastavro's own schemaless writer/reader, in one run.

    python bench/bench_avro_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) goes both ways through
``AvroConverter`` (Confluent wire format, schema registered once in the test suite's Schema
Registry server, started here on a loopback port). The baseline is fastavro's
``schemaless_writer`` of the equivalent dict into a fresh ``BytesIO`` (``getvalue()``), and
``schemaless_reader`` of the payload into a dict, with the same parsed schema: what a
hand-written Avro loop does, without the Connect Struct, the header or the registry. Both are
timed in alternating chunks of 1,000 records so that a shared machine's load hits both alike.
Results are printed and appended to ``bench/RESULTS.md`` (``## AvroConverter``).
"""

from __future__ import annotations

import io

import fastavro
from converter_bench import SCHEMA, Result, main, measure
from converter_bench import payloads as make_payloads

from sparkcat.api.data import Struct
from sparkcat.converters.avro import AvroConverter
from sparkcat.converters.avro.converter import parse_for_fastavro


def run(n: int, url: str) -> list[Result]:
    payloads = make_payloads()
    structs = [Struct.from_values(SCHEMA, list(p.values())) for p in payloads]
    converter = AvroConverter()
    converter.configure({"schema.registry.url": url}, False)
    parsed = parse_for_fastavro(converter.avro_schema(SCHEMA))
    messages = [converter.from_connect_data("t", SCHEMA, s) for s in structs]
    assert all(m is not None for m in messages)

    def plain(payload: dict[str, object]) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, payload)
        return buffer.getvalue()

    bodies = [plain(p) for p in payloads]
    assert [m[5:] for m in messages if m] == bodies, "payload bytes differ from fastavro's"
    decoded = [converter.to_connect_data("t", m) for m in messages]
    assert [d.value.values for d in decoded] == [s.values for s in structs]

    encode = converter.from_connect_data
    decode = converter.to_connect_data
    writer, reader, bytes_io = fastavro.schemaless_writer, fastavro.schemaless_reader, io.BytesIO

    def case_encode() -> None:
        for s in structs:
            encode("t", SCHEMA, s)

    def base_encode() -> None:
        for p in payloads:
            buffer = bytes_io()
            writer(buffer, parsed, p)
            buffer.getvalue()

    def case_decode() -> None:
        for m in messages:
            decode("t", m)

    def base_decode() -> None:
        for b in bodies:
            reader(bytes_io(b), parsed, None)

    return measure(
        n,
        [
            ("from_connect_data (Struct -> Confluent Avro bytes)", case_encode, base_encode),
            ("to_connect_data (Confluent Avro bytes -> Struct)", case_decode, base_decode),
        ],
    )


if __name__ == "__main__":
    main(
        __doc__,
        run,
        section="## AvroConverter",
        intro="`python bench/bench_avro_converter.py`: AvroConverter (Struct <-> Confluent-format "
        "bytes) vs fastavro's own `schemaless_writer`/`schemaless_reader` of the same dicts "
        "with the same parsed schema (5-field struct).",
        library=f"fastavro {fastavro.__version__}",
        baseline="fastavro baseline",
    )
