"""ProtobufConverter throughput against a hand-written protobuf loop, in one run.

    python bench/bench_protobuf_converter.py [--records N] [--no-append]

A 5-field struct (int64, string, float64, boolean, optional string) goes both ways through
``ProtobufConverter`` (Confluent wire format, schema registered once in the test suite's Schema
Registry server, started here on a loopback port). The baseline is a hand-written loop over the
same message class (upb's dynamic message built from the descriptor the converter registers):
``Record(**fields).SerializeToString()`` of the equivalent dict, and ``Record.FromString`` of
the payload with its five fields read into a dict: what a hand-written protobuf loop does,
without the Connect Struct, the header or the registry. Both are timed in alternating chunks of
1,000 records so that a shared machine's load hits both alike; the batch methods get the
same 1,000 records as one column. Results are printed and
appended to ``bench/RESULTS.md`` (``## ProtobufConverter``).
"""

from __future__ import annotations

import google.protobuf
from converter_bench import SCHEMA, Result, main, measure
from converter_bench import payloads as make_payloads

from sparkcat.api.data import Struct
from sparkcat.converters.protobuf import ProtobufConverter
from sparkcat.converters.protobuf.converter import message_class


def run(n: int, url: str) -> list[Result]:
    payloads = make_payloads()
    structs = [Struct.from_values(SCHEMA, list(p.values())) for p in payloads]
    converter = ProtobufConverter()
    converter.configure({"schema.registry.url": url}, False)
    record = message_class(converter.protobuf_schema(SCHEMA), "bench.Record")
    messages = [converter.from_connect_data("t", SCHEMA, s) for s in structs]
    bodies = [record(**p).SerializeToString() for p in payloads]
    assert [m[6:] for m in messages if m] == bodies, "payload bytes differ from the hand loop's"
    decoded = [converter.to_connect_data("t", m) for m in messages]
    # proto3 without presence: a null optional string reads back as ""
    expected = [[v if v is not None else "" for v in s.values] for s in structs]
    assert [d.value.values for d in decoded] == expected

    encode = converter.from_connect_data
    decode = converter.to_connect_data
    parse = record.FromString

    def case_encode() -> None:
        for s in structs:
            encode("t", SCHEMA, s)

    def base_encode() -> None:
        for p in payloads:
            record(**p).SerializeToString()

    def case_decode() -> None:
        for m in messages:
            decode("t", m)

    encode_batch = converter.from_connect_data_batch
    decode_batch = converter.to_connect_data_batch
    assert encode_batch("t", SCHEMA, structs) == messages
    assert [v.values for v in decode_batch("t", messages).values] == expected

    def case_encode_batch() -> None:
        encode_batch("t", SCHEMA, structs)

    def case_decode_batch() -> None:
        decode_batch("t", messages)

    def base_decode() -> None:
        for b in bodies:
            m = parse(b)
            _ = {"id": m.id, "name": m.name, "score": m.score, "active": m.active, "note": m.note}

    return measure(
        n,
        [
            ("from_connect_data (Struct -> Confluent Protobuf bytes)", case_encode, base_encode),
            ("to_connect_data (Confluent Protobuf bytes -> Struct)", case_decode, base_decode),
            ("from_connect_data_batch (columns of 1,000)", case_encode_batch, base_encode),
            ("to_connect_data_batch (columns of 1,000)", case_decode_batch, base_decode),
        ],
    )


if __name__ == "__main__":
    main(
        __doc__,
        run,
        section="## ProtobufConverter",
        intro="`python bench/bench_protobuf_converter.py`: ProtobufConverter (Struct <-> "
        "Confluent-format bytes) vs a hand-written loop over the same upb message class "
        "(`Record(**fields).SerializeToString()`, `Record.FromString` and five attribute "
        "reads) (5-field struct).",
        library=f"protobuf {google.protobuf.__version__}",
        baseline="hand-written loop",
    )
