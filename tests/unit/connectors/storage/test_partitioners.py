"""Encoded partitions of Confluent's partitioners and the Joda path formats."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sparkcat.api import Schema, SchemaBuilder, Struct, Timestamp
from sparkcat.api.errors import ConfigError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.partitioners import PartitionError, partitioner_for
from sparkcat.connectors.storage.time_format import JodaFormat

PKG = "io.confluent.connect.storage.partitioner."
TS = 1_700_000_000_000  # 2023-11-14T22:13:20Z
SCHEMA = (
    SchemaBuilder.struct()
    .field("region", SchemaBuilder.string().optional().build())
    .field("n", SchemaBuilder.int32().build())
    .field("ok", SchemaBuilder.boolean().build())
    .field("at", Timestamp.SCHEMA)
    .field("score", SchemaBuilder.float64().build())
    .build()
)


def settings(**overrides: Any) -> dict[str, Any]:
    props = {"format.class": c.JSON_FORMAT, "flush.size": "1"}
    props.update({k.replace("_", "."): str(v) for k, v in overrides.items()})
    return dict(c.parse(c.FILESYSTEM_CONFIG_DEF, props).values)


def record(value: Any, schema: Schema | None = SCHEMA, ts: int | None = TS) -> SinkRecord:
    return SinkRecord("orders", 2, None, None, schema, value, 17, ts)


def struct(region: str | None = "eu", n: int = 5) -> Struct:
    from datetime import UTC, datetime

    at = datetime.fromtimestamp(TS / 1000, UTC)
    return (
        Struct(SCHEMA).put("region", region).put("n", n).put("ok", True).put("at", at)
        .put("score", 1.5)
    )  # fmt: skip


def test_default_partitioner() -> None:
    p = partitioner_for(settings())
    assert p.encode_partition(record(struct()), 0) == "partition=2"
    assert p.partitioned_path("orders", "partition=2") == "orders/partition=2"


def test_field_partitioner_struct_and_map() -> None:
    p = partitioner_for(settings(partitioner_class=PKG + "FieldPartitioner",
                                 partition_field_name="region,n,ok"))  # fmt: skip
    assert p.encode_partition(record(struct()), 0) == "region=eu/n=5/ok=true"
    assert p.encode_partition(record(struct(region=None)), 0) == "region=null/n=5/ok=true"
    schemaless = {"region": "us", "n": 1, "ok": False}
    assert p.encode_partition(record(schemaless, None), 0) == "region=us/n=1/ok=false"


def test_field_partitioner_missing_field_is_a_partition_error() -> None:
    p = partitioner_for(settings(partitioner_class="FieldPartitioner",
                                 partition_field_name="customer"))  # fmt: skip
    with pytest.raises(PartitionError, match="Field 'customer' is not present"):
        p.encode_partition(record(struct()), 0)
    with pytest.raises(PartitionError, match="not present"):
        p.encode_partition(record({"x": 1}, None), 0)
    with pytest.raises(PartitionError, match="not a Struct or Map"):
        p.encode_partition(record("text", None), 0)


def test_field_partitioner_rejects_float_fields() -> None:
    p = partitioner_for(settings(partitioner_class="FieldPartitioner",
                                 partition_field_name="score"))  # fmt: skip
    with pytest.raises(PartitionError, match="not supported"):
        p.encode_partition(record(struct()), 0)


def time_settings(**overrides: Any) -> dict[str, Any]:
    base = {"partitioner_class": PKG + "TimeBasedPartitioner", "locale": "en-US",
            "timezone": "UTC", "timestamp_extractor": "Record",
            "partition_duration_ms": 3_600_000,
            "path_format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"}  # fmt: skip
    base.update(overrides)
    return settings(**base)


def test_time_based_with_record_timestamps() -> None:
    p = partitioner_for(time_settings())
    assert p.encode_partition(record(struct()), 0) == "year=2023/month=11/day=14/hour=22"


def test_time_based_duration_floors_in_local_time() -> None:
    p = partitioner_for(time_settings(timezone="Asia/Kolkata", partition_duration_ms=86_400_000,
                                      path_format="YYYY-MM-dd-HH-mm"))  # fmt: skip
    # 22:13 UTC is 03:43 the next day in India; the day bucket starts at local midnight.
    assert p.encode_partition(record(struct()), 0) == "2023-11-15-00-00"


@pytest.mark.parametrize(
    ("name", "expected"),
    [("DailyPartitioner", "year=2023/month=11/day=14"),
     ("HourlyPartitioner", "year=2023/month=11/day=14/hour=22")],
)  # fmt: skip
def test_daily_and_hourly(name: str, expected: str) -> None:
    p = partitioner_for(time_settings(partitioner_class=PKG + name, path_format=""))
    assert p.encode_partition(record(struct()), 0) == expected


def test_wallclock_and_record_field_extractors() -> None:
    wall = partitioner_for(time_settings(timestamp_extractor="Wallclock"))
    assert (
        wall.encode_partition(record(struct(), ts=None), 0) == "year=1970/month=01/day=01/hour=00"
    )
    field = partitioner_for(time_settings(timestamp_extractor="RecordField", timestamp_field="at"))
    assert field.encode_partition(record(struct(), ts=None), 0).endswith("hour=22")
    iso = record({"at": "2024-02-03T04:05:06Z"}, None)
    assert field.encode_partition(iso, 0) == "year=2024/month=02/day=03/hour=04"
    digits = record({"at": str(TS)}, None)
    assert field.encode_partition(digits, 0).endswith("hour=22")


def test_unextractable_timestamps() -> None:
    p = partitioner_for(time_settings())
    with pytest.raises(PartitionError, match="Unable to determine timestamp"):
        p.encode_partition(record(struct(), ts=None), 0)
    field = partitioner_for(time_settings(timestamp_extractor="RecordField", timestamp_field="at"))
    with pytest.raises(PartitionError, match="ISO-8601"):
        field.encode_partition(record({"at": "yesterday"}, None), 0)
    with pytest.raises(PartitionError, match="Error extracting timestamp"):
        field.encode_partition(record({"at": None}, None), 0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [({"timezone": ""}, "Timezone cannot be empty"), ({"locale": ""}, "Locale cannot be empty"),
     ({"path_format": ""}, "Path format cannot be empty"),
     ({"partition_duration_ms": -1}, "needs to be a positive"),
     ({"timezone": "Mars/Base"}, "unknown timezone"),
     ({"timestamp_extractor": "Bogus"}, "Record, RecordField, Wallclock"),
     ({"path_format": "YYYY/QQ"}, "Illegal pattern component: Q"),
     ({"partitioner_class": "x.NoSuchPartitioner"}, "must be one of")],
)  # fmt: skip
def test_config_errors(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        partitioner_for(time_settings(**overrides))


def test_joda_format_letters() -> None:
    fmt = JodaFormat("'dt'=yyyy-MM-dd'T'HH:mm:ss.SSS MMM EEE D yy ''", ZoneInfo("UTC"))
    assert fmt.format_ms(TS + 7) == "dt=2023-11-14T22:13:20.007 Nov Tue 318 23 '"
