"""The error handling of one lease: operator, reporters, metrics, errant record reporter.

Built once per lease (:meth:`TaskErrorHandling.for_task`): cheap when nothing is configured
(no client is created unless a DLQ topic is set). The lease calls
:meth:`TaskErrorHandling.await_reports` before offsets are committed, so an offset is
committed only once the reports of the records before it are durable.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.runtime.errors.errant import WorkerErrantRecordReporter
from sparkcat.runtime.errors.metrics import ErrorHandlingMetrics
from sparkcat.runtime.errors.operator import (
    ErrorReporter,
    RetryWithToleranceOperator,
    ToleranceType,
)
from sparkcat.runtime.errors.reporters import (
    DeadLetterQueueReporter,
    LogReporter,
    ensure_dlq_topic,
)

__all__ = ["TaskErrorHandling", "dlq_client_id"]

log = logging.getLogger(__name__)

_AWAIT_TIMEOUT_S = 30.0


def dlq_client_id(connector: str, task: int) -> str:
    """Kafka's DLQ producer id: ``connector-dlq-producer-<conn>-<task>``."""
    return f"connector-dlq-producer-{connector}-{task}"


class TaskErrorHandling:
    """Everything a lease needs for ``errors.*`` (see the module docs)."""

    def __init__(
        self,
        connector: str,
        task: int,
        connector_config: Mapping[str, str],
        sink: bool,
        dlq: DeadLetterQueueReporter | None = None,
        **operator_kwargs: Any,
    ) -> None:
        self.connector = connector
        self.task = task
        self.metrics = ErrorHandlingMetrics()
        self.operator = RetryWithToleranceOperator.from_config(
            connector_config, self.metrics, **operator_kwargs
        )
        self.log_reporter = LogReporter(f"{connector}-{task}", connector_config, self.metrics, sink)
        self.dlq = dlq
        reporters: list[ErrorReporter] = [self.log_reporter]
        if dlq is not None:
            reporters.append(dlq)
        self.operator.reporters = reporters
        self.errant: WorkerErrantRecordReporter | None = None

    @classmethod
    def for_task(
        cls,
        connector: str,
        task: int,
        connector_config: Mapping[str, str],
        worker_config: Mapping[str, str],
        sink: bool,
    ) -> TaskErrorHandling:
        """The error handling of a task; for a sink with a DLQ topic, the topic is created
        if missing (1 partition) and the process's DLQ producer is used."""
        dlq = None
        topic = str(connector_config.get("errors.deadletterqueue.topic.name", "")).strip()
        if sink and topic:
            dlq = _dlq_reporter(connector, task, topic, connector_config, worker_config)
        handling = cls(connector, task, connector_config, sink, dlq)
        if dlq is not None:
            dlq.metrics = handling.metrics
        return handling

    @property
    def tolerate_all(self) -> bool:
        return self.operator.tolerance is ToleranceType.ALL

    def errant_reporter(self, pipeline: Any) -> WorkerErrantRecordReporter | None:
        """The KIP-610 reporter: only when a DLQ topic is set or ``errors.log.enable``."""
        if self.dlq is None and not self.log_reporter.enabled:
            return None
        if self.errant is None:
            self.errant = WorkerErrantRecordReporter(self.operator, pipeline)
        return self.errant

    def await_reports(self, timeout_s: float = _AWAIT_TIMEOUT_S) -> None:
        """Block until every report made so far is durable. A failed errant-record report
        fails the task (Kafka's ``awaitFutures``); DLQ failures of records the framework
        skipped are only logged and counted, as in Kafka."""
        if self.dlq is not None and self.dlq.flush(timeout_s):
            log.error("%s-%d: dead letter queue writes still in flight", self.connector, self.task)
        if self.errant is None:
            return
        for future in self.errant.pending():
            try:
                future.result(timeout=timeout_s)
            except (FutureTimeoutError, Exception) as exc:
                raise ConnectError(
                    "Encountered an error while awaiting an errant record future's completion."
                ) from exc

    def snapshot(self) -> dict[str, float]:
        return self.metrics.snapshot()

    def close(self) -> None:
        self.operator.trigger_stop()
        self.operator.close()


def _dlq_reporter(
    connector: str,
    task: int,
    topic: str,
    connector_config: Mapping[str, str],
    worker_config: Mapping[str, str],
) -> DeadLetterQueueReporter:
    from sparkcat.kafka import clients
    from sparkcat.runtime.tasks import client_cache

    rf = int(connector_config.get("errors.deadletterqueue.topic.replication.factor", "3") or 3)
    admin = client_cache.get_admin(
        clients.admin_config(
            worker_config, connector_config, clients.admin_client_id(connector, task)
        )
    )
    ensure_dlq_topic(admin, worker_config.get("bootstrap.servers", ""), topic, rf)
    producer = client_cache.get_producer(
        clients.producer_config(worker_config, connector_config, dlq_client_id(connector, task))
    )
    return DeadLetterQueueReporter(
        producer, connector, task, connector_config, ErrorHandlingMetrics()
    )
