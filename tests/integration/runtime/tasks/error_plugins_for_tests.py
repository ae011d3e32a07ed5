"""Test-only plugins for the error-handling lease tests (``error_plugins_for_tests:<Class>``).

Leases run in the test's own process, so tasks record what they saw in module-level dicts
keyed by the ``sink.key`` task config.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from sparkcat.api.config import ConfigDef
from sparkcat.api.errors import DataError, RetriableError
from sparkcat.api.records import SinkRecord
from sparkcat.api.sink import SinkTask
from sparkcat.api.transform import Transformation

SUNK: dict[str, list[SinkRecord]] = defaultdict(list)
PUT_TIMES: dict[str, list[float]] = defaultdict(list)
REPORTS: dict[str, list[Any]] = defaultdict(list)


class FlakySinkTask(SinkTask):
    """``put`` of a non-empty batch raises RetriableError ``retriable.failures`` times, then
    keeps the records; the times of non-empty puts go to PUT_TIMES. ``report.every=n``
    reports records whose ``n`` value is a multiple of n to the errant record reporter."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self._key = props["sink.key"]
        self._failures = int(props.get("retriable.failures", "0"))
        self._every = int(props.get("report.every", "0"))
        self._reporter = self.context.errant_record_reporter()
        REPORTS[self._key].append(("reporter", self._reporter is not None))

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return
        PUT_TIMES[self._key].append(time.monotonic())
        if self._failures > 0:
            self._failures -= 1
            raise RetriableError("not now")
        for record in records:
            if self._every and record.value["n"] % self._every == 0:
                assert self._reporter is not None
                REPORTS[self._key].append(self._reporter.report(record, DataError("rejected")))
            else:
                SUNK[self._key].append(record)

    def stop(self) -> None:
        return None


class FailOnBad(Transformation[Any]):
    """Raises DataError for a record whose value dict has ``"bad": true``."""

    def configure(self, configs: dict[str, Any]) -> None:
        return None

    def apply(self, record: Any) -> Any:
        if isinstance(record.value, dict) and record.value.get("bad"):
            raise DataError(f"Error when value={record.value['n']}")
        return record

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        return None
