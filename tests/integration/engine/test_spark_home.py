"""On a local master Spark's Python processes import this interpreter's installed pyspark (with
its cached bytecode), not the zip of it that Spark puts first on their path
(:mod:`sparkcat.engine.spark_home`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql.datasource import DataSource, DataSourceReader

pytestmark = pytest.mark.spark


def _where_pyspark_comes_from() -> str:
    import pyspark

    return "zipped" if ".zip" in pyspark.__file__ else "installed"


class _Probe(DataSource):
    """Names its one column after where the planner process imported pyspark from."""

    @classmethod
    def name(cls) -> str:
        return "sparkcat_pyspark_origin"

    def schema(self) -> str:  # runs in a driver-side planner process
        return f"{_where_pyspark_comes_from()} string"

    def reader(self, schema: Any) -> DataSourceReader:
        return _ProbeReader()


class _ProbeReader(DataSourceReader):
    def read(self, partition: Any) -> Iterator[tuple[str]]:  # runs in an executor's worker
        yield (_where_pyspark_comes_from(),)


def test_task_workers_import_the_installed_pyspark(spark: Any) -> None:
    rows = (
        spark.sparkContext.parallelize(range(2), 2)
        .map(lambda _: _where_pyspark_comes_from())
        .collect()
    )
    assert rows == ["installed", "installed"]


def test_planners_and_readers_import_the_installed_pyspark(spark: Any) -> None:
    spark.dataSource.register(_Probe)
    frame = spark.read.format(_Probe.name()).load()
    assert frame.columns == ["installed"]
    assert [row[0] for row in frame.collect()] == ["installed"]
