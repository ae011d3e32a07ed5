"""Error handling of tasks: retries, tolerance, error log, dead letter queue, errant record
reporter and per-task error metrics (Kafka's KIP-298, KIP-610, KIP-779; connect-spec §8).

Named ``error_handling`` so as not to clash with :mod:`sparkcat.runtime.errors` (the REST
errors). Modules: :mod:`.operator` (``Stage``, ``RetryWithToleranceOperator``),
:mod:`.reporters` (log and DLQ), :mod:`.errant` (KIP-610), :mod:`.metrics`, :mod:`.task`
(one lease's bundle), :mod:`.record_paths` (the pipeline's per-record fallback).
"""

from sparkcat.runtime.error_handling.metrics import METRIC_NAMES, ErrorHandlingMetrics
from sparkcat.runtime.error_handling.operator import (
    ProcessingContext,
    RetryWithToleranceOperator,
    Stage,
    ToleranceType,
)
from sparkcat.runtime.error_handling.task import TaskErrorHandling

__all__ = [
    "METRIC_NAMES",
    "ErrorHandlingMetrics",
    "ProcessingContext",
    "RetryWithToleranceOperator",
    "Stage",
    "TaskErrorHandling",
    "ToleranceType",
]
