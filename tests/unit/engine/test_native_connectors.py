"""SparkSinkConnector / SparkSourceConnector: config validation and task configs (no Spark)."""

from __future__ import annotations

import pytest

from sparkcat.engine.native_config import (
    MARIADB_URL_MESSAGE,
    NATIVE_KEY,
    source_partition,
    spark_options,
)
from sparkcat.engine.native_connectors import (
    SparkSinkConnector,
    SparkSinkTask,
    SparkSourceConnector,
    SparkSourceTask,
)
from sparkcat.runtime.isolation.plugins import default_registry


def errors(
    connector: SparkSinkConnector | SparkSourceConnector, props: dict[str, str]
) -> dict[str, list[str]]:
    return {v.name: v.error_messages for v in connector.validate(props) if v.error_messages}


def test_sink_accepts_a_path_in_append_mode() -> None:
    props = {"topics": "t", "spark.path": "/tmp/x", "spark.partition.by": "region"}
    assert errors(SparkSinkConnector(), props) == {}


@pytest.mark.parametrize("mode", ["overwrite", "ignore", "errorifexists"])
def test_sink_refuses_every_mode_but_append(mode: str) -> None:
    found = errors(SparkSinkConnector(), {"spark.path": "/tmp/x", "spark.mode": mode})
    assert "only appends" in found["spark.mode"][0]


@pytest.mark.parametrize(
    "props",
    [{}, {"spark.path": "/x", "spark.table": "t"}],
    ids=["neither", "both"],
)
def test_sink_needs_exactly_one_of_path_and_table(props: dict[str, str]) -> None:
    assert errors(SparkSinkConnector(), props) == {
        "spark.path": ["Exactly one of spark.path and spark.table"]
    }


def test_jdbc_needs_url_and_dbtable_options() -> None:
    found = errors(SparkSinkConnector(), {"spark.format": "jdbc", "spark.option.url": "jdbc:x"})
    assert found == {"spark.format": ["spark.format jdbc needs spark.option.dbtable"]}
    ok = {"spark.format": "jdbc", "spark.option.url": "jdbc:x", "spark.option.dbtable": "t"}
    assert errors(SparkSinkConnector(), ok) == {}


@pytest.mark.parametrize("connector", [SparkSinkConnector, SparkSourceConnector])
def test_jdbc_refuses_mariadb_urls_spark_has_no_dialect_for(
    connector: type[SparkSinkConnector] | type[SparkSourceConnector],
) -> None:
    props = {"topics": "t", "topic": "t", "spark.format": "jdbc", "spark.option.dbtable": "t",
             "spark.incrementing.column": "id",
             "spark.option.url": "jdbc:mariadb://db:3306/shop"}  # fmt: skip
    found = errors(connector(), props)
    assert found == {"spark.format": [MARIADB_URL_MESSAGE]}
    assert "jdbc:mysql://host:port/db" in MARIADB_URL_MESSAGE
    props["spark.option.url"] = "jdbc:mysql://db:3306/shop"
    assert errors(connector(), props) == {}


def test_flush_size_must_be_positive() -> None:
    found = errors(SparkSinkConnector(), {"spark.path": "/x", "flush.size": "0"})
    assert "flush.size" in found


def test_table_source_needs_an_incrementing_column() -> None:
    found = errors(SparkSourceConnector(), {"topic": "t", "spark.table": "db.t"})
    message = "A table source needs spark.incrementing.column"
    assert found == {"spark.incrementing.column": [message]}
    props = {"topic": "t", "spark.table": "db.t", "spark.incrementing.column": "id"}
    assert errors(SparkSourceConnector(), props) == {}


def test_jdbc_source_needs_an_incrementing_column() -> None:
    props = {"topic": "t", "spark.format": "jdbc", "spark.option.url": "jdbc:postgresql://d/x",
             "spark.option.dbtable": "public.rows"}  # fmt: skip
    found = errors(SparkSourceConnector(), props)
    assert found == {"spark.incrementing.column": [
        "A table source needs spark.incrementing.column"]}  # fmt: skip
    assert errors(SparkSourceConnector(), {**props, "spark.incrementing.column": "id"}) == {}


@pytest.mark.parametrize(
    ("props", "partition"),
    [
        ({"spark.path": "/in"}, {"spark.path": "/in"}),
        ({"spark.table": "db.t"}, {"spark.table": "db.t"}),
        ({"spark.format": "jdbc", "spark.option.url": "jdbc:postgresql://d/x?password=s",
          "spark.option.dbtable": "public.rows"}, {"spark.option.dbtable": "public.rows"}),
    ],
    ids=["path", "table", "jdbc"],
)  # fmt: skip
def test_source_partition_names_what_is_read_without_the_url(
    props: dict[str, str], partition: dict[str, str]
) -> None:
    assert source_partition(props) == partition


def test_task_configs_are_marked_for_the_engine() -> None:
    sink = SparkSinkConnector()
    sink.start({"topics": "t", "spark.path": "/x"})
    configs = sink.task_configs(3)
    assert len(configs) == 3
    assert all(c[NATIVE_KEY] == "sink" and c["spark.path"] == "/x" for c in configs)
    source = SparkSourceConnector()
    source.start({"topic": "t", "spark.path": "/x"})
    assert source.task_configs(4) == [{"topic": "t", "spark.path": "/x", NATIVE_KEY: "source"}]


def test_spark_options_strip_their_prefix() -> None:
    props = {"spark.option.compression": "zstd", "spark.option.url": "u", "spark.path": "/x"}
    assert spark_options(props) == {"compression": "zstd", "url": "u"}


def test_registry_resolves_names_and_aliases() -> None:
    registry = default_registry()
    assert registry.resolve("SparkSink", "sink") is SparkSinkConnector
    assert registry.resolve("SparkSourceConnector", "source") is SparkSourceConnector
    assert registry.class_name(SparkSinkTask) == "sparkcat.connectors.spark.SparkSinkTask"
    assert registry.resolve("sparkcat.connectors.spark.SparkSourceTask", "task") is SparkSourceTask


def test_placeholder_tasks_say_they_need_the_spark_engine() -> None:
    with pytest.raises(Exception, match="runs only on sparkcat's Spark engine"):
        SparkSinkTask().start({})
