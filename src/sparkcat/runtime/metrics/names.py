"""Kafka Connect's metric groups and names, with their descriptions.

Names are Kafka's, verbatim. ``DESCRIPTIONS`` feeds Prometheus' ``HELP`` lines and
``docs/metrics.md``.
"""

from __future__ import annotations

__all__ = [
    "CONNECTOR_GROUP",
    "DESCRIPTIONS",
    "ERROR_GROUP",
    "REBALANCE_GROUP",
    "SINK_GROUP",
    "SOURCE_GROUP",
    "TASK_GROUP",
    "WORKER_GROUP",
]

WORKER_GROUP = "connect-worker-metrics"
REBALANCE_GROUP = "connect-worker-rebalance-metrics"
CONNECTOR_GROUP = "connector-metrics"
TASK_GROUP = "connector-task-metrics"
SOURCE_GROUP = "source-task-metrics"
SINK_GROUP = "sink-task-metrics"
ERROR_GROUP = "task-error-metrics"

DESCRIPTIONS: dict[str, dict[str, str]] = {
    WORKER_GROUP: {
        "connector-count": "The number of connectors run in this worker.",
        "task-count": "The number of tasks run in this worker.",
        "task-abandoned-total": "The total number of task instances this worker abandoned "
        "because they did not stop within task.shutdown.graceful.timeout.ms (sparkcat).",
        "connector-startup-attempts-total": "The total number of connector startups that "
        "this worker has attempted.",
        "connector-startup-success-total": "The total number of connector starts that succeeded.",
        "connector-startup-failure-total": "The total number of connector starts that failed.",
        "connector-startup-success-percentage": "The average percentage of this worker's "
        "connectors starts that succeeded.",
        "connector-startup-failure-percentage": "The average percentage of this worker's "
        "connectors starts that failed.",
        "task-startup-attempts-total": "The total number of task startups that this worker "
        "has attempted.",
        "task-startup-success-total": "The total number of task starts that succeeded.",
        "task-startup-failure-total": "The total number of task starts that failed.",
        "task-startup-success-percentage": "The average percentage of this worker's tasks "
        "starts that succeeded.",
        "task-startup-failure-percentage": "The average percentage of this worker's tasks "
        "starts that failed.",
        "connector-total-task-count": "The number of tasks of the connector on the worker.",
        "connector-running-task-count": "The number of running tasks of the connector on "
        "the worker.",
        "connector-paused-task-count": "The number of paused tasks of the connector on the worker.",
        "connector-failed-task-count": "The number of failed tasks of the connector on the worker.",
        "connector-unassigned-task-count": "The number of unassigned tasks of the connector "
        "on the worker.",
        "connector-destroyed-task-count": "The number of destroyed tasks of the connector on "
        "the worker.",
        "connector-restarting-task-count": "The number of restarting tasks of the connector "
        "on the worker.",
    },
    REBALANCE_GROUP: {
        "completed-rebalances-total": "The total number of rebalances completed by this worker.",
        "epoch": "The epoch or generation number of this worker.",
        "rebalancing": "Whether this worker is currently rebalancing.",
        "rebalance-avg-time-ms": "The average time in milliseconds spent by this worker to "
        "rebalance.",
        "rebalance-max-time-ms": "The maximum time in milliseconds spent by this worker to "
        "rebalance.",
        "time-since-last-rebalance-ms": "The time in milliseconds since this worker "
        "completed the most recent rebalance.",
    },
    CONNECTOR_GROUP: {
        "connector-class": "The name of the connector class.",
        "connector-type": "The type of the connector. One of 'source' or 'sink'.",
        "status": "The status of the connector: one of 'unassigned', 'running', 'paused', "
        "'stopped', 'failed', or 'restarting'.",
    },
    TASK_GROUP: {
        "status": "The status of the connector task: one of 'unassigned', 'running', "
        "'paused', 'failed', or 'restarting'.",
        "running-ratio": "The fraction of time this task has spent in the running state.",
        "pause-ratio": "The fraction of time this task has spent in the pause state.",
        "batch-size-avg": "The average number of records in the batches the task has "
        "processed so far.",
        "batch-size-max": "The number of records in the largest batch the task has "
        "processed so far.",
        "offset-commit-avg-time-ms": "The average time in milliseconds taken by this task "
        "to commit offsets.",
        "offset-commit-max-time-ms": "The maximum time in milliseconds taken by this task "
        "to commit offsets.",
        "offset-commit-success-percentage": "The average percentage of this task's offset "
        "commit attempts that succeeded.",
        "offset-commit-failure-percentage": "The average percentage of this task's offset "
        "commit attempts that failed.",
    },
    SOURCE_GROUP: {
        "source-record-poll-rate": "The average per-second number of records "
        "produced/polled (before transformation) by this task.",
        "source-record-poll-total": "The total number of records produced/polled (before "
        "transformation) by this task.",
        "source-record-write-rate": "The average per-second number of records written to "
        "Kafka for this task (after transformations).",
        "source-record-write-total": "The number of records output written to Kafka for "
        "this task (after transformations).",
        "poll-batch-avg-time-ms": "The average time in milliseconds taken by this task to "
        "poll for a batch of source records.",
        "poll-batch-max-time-ms": "The maximum time in milliseconds taken by this task to "
        "poll for a batch of source records.",
        "source-record-active-count": "The number of records that have been produced by "
        "this task but not yet completely written to Kafka.",
        "transaction-size-min": "The number of records in the smallest transaction the task "
        "has committed so far.",
        "transaction-size-max": "The number of records in the largest transaction the task "
        "has committed so far.",
        "transaction-size-avg": "The average number of records in the transactions the task "
        "has committed so far.",
    },
    SINK_GROUP: {
        "sink-record-read-rate": "The average per-second number of records read from Kafka "
        "for this task (before transformations).",
        "sink-record-read-total": "The total number of records read from Kafka by this task "
        "(before transformations).",
        "sink-record-send-rate": "The average per-second number of records output from the "
        "transformations and sent/put to this task.",
        "sink-record-send-total": "The total number of records output from the "
        "transformations and sent/put to this task.",
        "put-batch-avg-time-ms": "The average time taken by this task to put a batch of "
        "sinks records.",
        "put-batch-max-time-ms": "The maximum time taken by this task to put a batch of "
        "sinks records.",
        "partition-count": "The number of topic partitions assigned to this task.",
        "offset-commit-completion-rate": "The average per-second number of offset commit "
        "completions that were completed successfully.",
        "offset-commit-completion-total": "The total number of offset commit completions "
        "that were completed successfully.",
        "offset-commit-skip-rate": "The average per-second number of offset commit "
        "completions that were received too late and skipped/ignored.",
        "offset-commit-skip-total": "The total number of offset commit completions that "
        "were received too late and skipped/ignored.",
        "offset-commit-seq-no": "The current sequence number for offset commits.",
        "sink-record-lag-max": "The maximum lag in terms of number of records that the sink "
        "task is behind the consumer's position for any topic partitions.",
    },
    ERROR_GROUP: {
        "total-record-failures": "The number of record processing failures in this task.",
        "total-record-errors": "The number of record processing errors in this task.",
        "total-records-skipped": "The number of records skipped due to errors.",
        "total-retries": "The number of operations retried.",
        "total-errors-logged": "The number of errors that were logged.",
        "deadletterqueue-produce-requests": "The number of attempted writes to the dead "
        "letter queue.",
        "deadletterqueue-produce-failures": "The number of failed writes to the dead letter queue.",
        "last-error-timestamp": "The epoch timestamp when this task last encountered an error.",
    },
}
