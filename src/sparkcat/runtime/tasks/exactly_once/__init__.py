"""Exactly-once source delivery (KIP-618): the transactional source lease
(:mod:`.source_task`) and a reader that resolves transactions from the log itself
(:mod:`.committed_reader`). This package root stays import-light: the plain source lease asks
:func:`enabled` on every lease."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["enabled", "transactional_id"]


def enabled(worker_config: Mapping[str, Any]) -> bool:
    """Whether leases of this worker's source tasks are transactional: distributed mode (a
    ``group.id``) with ``exactly.once.source.support=enabled``."""
    support = str(worker_config.get("exactly.once.source.support", "disabled"))
    return support.strip().lower() == "enabled" and bool(worker_config.get("group.id"))


def transactional_id(group_id: str, connector: str, task: int) -> str:
    """Kafka's ``"%s-%s-%d"`` of group, connector and task (a source task's producer)."""
    return f"{group_id}-{connector}-{task}"
