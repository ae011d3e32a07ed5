"""Helpers for tests of the distributed group membership."""

from __future__ import annotations

from collections.abc import Collection

from sparkcat.runtime.distributed.protocol import ExtendedAssignment
from sparkcat.runtime.rest.entities import ConnectorTaskId


class IgnoreRebalances:
    """A rebalance listener for members whose assignments the test does not look at."""

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None:
        pass

    def on_revoked(
        self, leader: str | None, connectors: Collection[str], tasks: Collection[ConnectorTaskId]
    ) -> None:
        pass
