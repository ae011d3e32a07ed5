"""Kafka Connect's metrics in the Prometheus text format, named as the JMX exporter names them.

The Prometheus JMX exporter, without rules, turns the MBean
``kafka.connect:type=<group>,connector=<c>,task=<t>`` attribute ``<metric>`` into
``kafka_connect_<group>_<metric>{connector="<c>",task="<t>"}`` with every character outside
``[a-zA-Z0-9_]`` replaced by ``_``. We use the same names, so dashboards built on that
exporter work here. String-valued attributes (``status``, ``connector-class``,
``connector-type``), which the exporter cannot show as numbers, become a 1-valued series with
the string in a label of the metric's name (``status="running"``). ``docs/metrics.md`` lists
the mapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.core import Metric as PromMetric
from prometheus_client.registry import Collector

from sparkcat.runtime.metrics.names import DESCRIPTIONS
from sparkcat.runtime.metrics.registry import Metric

__all__ = ["CONTENT_TYPE", "prometheus_name", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_INVALID = re.compile(r"[^a-zA-Z0-9_]")


def prometheus_name(group: str, name: str) -> str:
    """``kafka_connect_<group>_<metric>`` with ``-`` (and anything else invalid) as ``_``."""
    return _INVALID.sub("_", f"kafka_connect_{group}_{name}")


def _label(name: str) -> str:
    return _INVALID.sub("_", name)


class _ConnectCollector(Collector):
    def __init__(self, source: Callable[[], Iterable[Metric]]) -> None:
        self._source = source

    def collect(self) -> Iterator[PromMetric]:
        families: dict[str, GaugeMetricFamily] = {}
        label_names: dict[str, list[str]] = {}
        for metric in self._source():
            key = prometheus_name(metric.group, metric.name)
            labels = [k for k, _ in metric.tags]
            values = [v for _, v in metric.tags]
            if metric.text is not None:
                labels.append(_label(metric.name))
                values.append(metric.text)
            family = families.get(key)
            if family is None:
                doc = DESCRIPTIONS.get(metric.group, {}).get(metric.name, metric.name)
                family = families[key] = GaugeMetricFamily(key, doc, labels=labels)
                label_names[key] = labels
            elif label_names[key] != labels:
                continue  # one label set per family, as the text format requires
            family.add_metric(values, metric.value)
        yield from families.values()


def render(source: Callable[[], Iterable[Metric]]) -> bytes:
    """The text exposition of the metrics ``source()`` returns at the time of the call."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ConnectCollector(source))
    return generate_latest(registry)
