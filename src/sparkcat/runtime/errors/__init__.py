"""The error handling of tasks: retries, tolerance, error log, dead letter queue, errant record
reporter and per-task error metrics (Kafka's KIP-298, KIP-610, KIP-779): :mod:`.operator`
(``Stage``, ``RetryWithToleranceOperator``), :mod:`.reporters` (log and DLQ), :mod:`.errant`
(KIP-610), :mod:`.metrics`, :mod:`.task` (one lease's bundle), :mod:`.record_paths` (the
pipeline's per-record fallback). The REST API's errors are in :mod:`sparkcat.runtime.rest.errors`.
"""
