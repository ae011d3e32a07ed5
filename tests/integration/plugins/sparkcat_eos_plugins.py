"""Test-only plugins for exactly-once source delivery (KIP-618), loaded through ``plugin.path``.

* :class:`PreflightSourceConnector` answers the exactly-once preflight calls as its config
  says (``eos.answer`` / ``boundary.answer``: ``SUPPORTED``, ``UNSUPPORTED``, ``none`` or
  ``raise``).
* :class:`SequenceSourceConnector` / :class:`SequenceSourceTask` emit ``records.total``
  records per task (value ``<task>:<n>``, key ``n``), ``batch.size`` per poll, with the
  offset ``{"n": n + 1}`` of source partition ``{"task": <task>}``, resuming from the stored
  offset. Options: ``partition.per.task`` (task n writes Kafka partition n);
  ``poll.sleep.ms`` (pause per poll); ``records.per.second`` (a steady rate instead: each
  poll hands out the records due by then, up to ten batches, so slow polls and the gaps
  between leases are caught up; due since ``rate.epoch.ms``, wall-clock, when given, else
  since the lease started); ``stall.after`` + ``release.file``
  (after that many records of one lease, poll returns nothing until the file exists: a
  zombie); ``stopped.report`` + ``report.servers`` (KIP-419 check, see ``stopped``); and,
  with ``transaction.boundary=connector``, ``commit.every`` (ask for a commit after every
  that many records, record-level) and ``abort.at`` (the commit boundary at that record
  count aborts instead: those ``commit.every`` records are discarded).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from sparkcat.api import ConfigDef, SourceConnector, SourceRecord, SourceTask
from sparkcat.api.data import STRING_SCHEMA
from sparkcat.api.source import ConnectorTransactionBoundaries, ExactlyOnceSupport


def _answer(value: str | None, enum: Any) -> Any:
    if value is None or value == "none":
        return None
    if value == "raise":
        raise RuntimeError("preflight exploded")
    return enum(value)


class PreflightSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def stop(self) -> None:
        pass

    def stopped(self) -> None:
        # ``stopped.report``: write "<committed> <open>" record counts of the topic as seen
        # now, through the committed reader (KIP-419: stopped() comes after the last commit).
        report = self._props.get("stopped.report")
        if report:
            from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

            view = read_topic(self._props["report.servers"], self._topic)
            with open(report, "w", encoding="utf-8") as f:
                f.write(f"{len(view.records)} {len(view.open)}")

    def config(self) -> ConfigDef:
        return ConfigDef()

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return _answer(config.get("eos.answer"), ExactlyOnceSupport)  # type: ignore[no-any-return]

    def can_define_transaction_boundaries(
        self, config: Mapping[str, str]
    ) -> ConnectorTransactionBoundaries:
        return _answer(config.get("boundary.answer"), ConnectorTransactionBoundaries)  # type: ignore[no-any-return]


class SequenceSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def task_class(self) -> type[SourceTask]:
        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"task.id": str(i)}) for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def stopped(self) -> None:
        # ``stopped.report``: write "<committed> <open>" record counts of the topic as seen
        # now, through the committed reader (KIP-419: stopped() comes after the last commit).
        report = self._props.get("stopped.report")
        if report:
            from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

            view = read_topic(self._props["report.servers"], self._topic)
            with open(report, "w", encoding="utf-8") as f:
                f.write(f"{len(view.records)} {len(view.open)}")

    def config(self) -> ConfigDef:
        return ConfigDef()

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(
        self, config: Mapping[str, str]
    ) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class SequenceSourceTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)
        self._task = props.get("task.id", "0")
        self._topic = props["topic"]
        self._total = int(props.get("records.total", "1000"))
        self._batch = int(props.get("batch.size", "100"))
        self._sleep_s = int(props.get("poll.sleep.ms", "0")) / 1000.0
        self._stall_after = int(props.get("stall.after", "0"))
        self._release = props.get("release.file", "")
        self._commit_every = int(props.get("commit.every", "0"))
        self._abort_at = int(props.get("abort.at", "-1"))
        self._partition = {"task": self._task}
        per_task = props.get("partition.per.task", "false") == "true"
        self._kafka_partition = int(self._task) if per_task else None
        stored = self.context.offset_storage_reader().offset(self._partition)
        self._next = int(stored["n"]) if stored else 0
        self._emitted = 0
        self._rate = float(props.get("records.per.second", "0"))
        epoch_ms = props.get("rate.epoch.ms")
        if epoch_ms is None:
            self._epoch, self._first = time.time(), self._next
        else:
            self._epoch, self._first = int(epoch_ms) / 1000.0, 0

    def _due(self) -> int:
        """The end of this poll's records: ``batch.size`` on, or what the steady rate owes."""
        if not self._rate:
            return min(self._next + self._batch, self._total)
        owed = self._first + int((time.time() - self._epoch) * self._rate)
        return min(owed, self._next + 10 * self._batch, self._total)

    def poll(self) -> list[SourceRecord] | None:
        if self._sleep_s:
            time.sleep(self._sleep_s)
        if self._stall_after and self._emitted >= self._stall_after:
            if not os.path.exists(self._release):
                time.sleep(0.01)
                return None
            self._stall_after = 0
        end = self._due()
        records = [self._record(n) for n in range(self._next, end)]
        self._next = end
        self._emitted += len(records)
        self._define_boundaries(records)
        return records or None

    def _record(self, n: int) -> SourceRecord:
        return SourceRecord(
            self._partition,
            {"n": n + 1},
            self._topic,
            self._kafka_partition,
            STRING_SCHEMA,
            str(n),
            STRING_SCHEMA,
            f"{self._task}:{n}",
        )

    def _define_boundaries(self, records: list[SourceRecord]) -> None:
        context = self.context.transaction_context()
        if context is None or not self._commit_every:
            return
        for record in records:
            count = int(record.source_offset["n"])  # type: ignore[index]
            if count % self._commit_every:
                continue
            if count == self._abort_at:
                context.abort_transaction(record)
            else:
                context.commit_transaction(record)

    def stop(self) -> None:
        pass

    def stopped(self) -> None:
        # ``stopped.report``: write "<committed> <open>" record counts of the topic as seen
        # now, through the committed reader (KIP-419: stopped() comes after the last commit).
        report = self._props.get("stopped.report")
        if report:
            from sparkcat.runtime.tasks.exactly_once.committed_reader import read_topic

            view = read_topic(self._props["report.servers"], self._topic)
            with open(report, "w", encoding="utf-8") as f:
                f.write(f"{len(view.records)} {len(view.open)}")
