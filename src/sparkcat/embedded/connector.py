"""The handle of one connector of an embedded cluster (``connect.add_connector(...)``).

Each method is the herder call the REST API makes for the same endpoint, so the answers have
the REST API's shapes (``status()`` is the ``GET /connectors/{name}/status`` body). Reads
are answered from this process's view of the cluster; writes Kafka reserves for the leader
(stop, restart, delete, offsets) go to the leader (:mod:`.leader`). A handle holds only the
name: it stays valid across rebalances and in every process of the group.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.embedded.leader import call_leader

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder

_POLL_S = 0.1


class Connector:
    """A connector of the cluster, by name."""

    def __init__(self, herder: DistributedHerder, name: str) -> None:
        self._herder = herder
        self.name = name
        self._path = f"/connectors/{quote(name, safe='')}"

    def __repr__(self) -> str:
        return f"Connector({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Connector) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    # -- reads ------------------------------------------------------------------------------
    def config(self) -> dict[str, str]:
        """The connector's config as stored (``GET /connectors/{name}/config``)."""
        return self._herder.connector_config(self.name)

    def status(self) -> dict[str, Any]:
        """``{"name", "connector": {"state", "worker_id"}, "tasks": [...], "type"}``."""
        return self._herder.connector_status(self.name).to_json()

    def topics(self, wait: bool = False, timeout: float = 60.0) -> list[str]:
        """The topics the connector's tasks produced to or consumed from (KIP-558 active
        topics), sorted. ``wait=True`` waits up to ``timeout`` seconds for the first one
        (a source's topic appears with its first record); ``TimeoutError`` if none came."""
        deadline = time.monotonic() + timeout
        while True:
            topics = self._active_topics()
            if topics or not wait:
                return topics
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Connector {self.name} used no topic within {timeout:g} s")
            time.sleep(_POLL_S)

    def _active_topics(self) -> list[str]:
        found = set(self._herder.connector_active_topics(self.name)[self.name]["topics"])
        # Tasks on other members of the group report theirs through the status topic.
        topics_of = getattr(self._herder.status, "get_all_topics", None)
        if topics_of is not None:
            found.update(t.topic for t in topics_of(self.name))
        return sorted(found)

    def wait_running(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until the connector and all its tasks (at least one) are RUNNING; returns the
        status. Raises ``ConnectError`` with the trace when one of them FAILED, and
        ``TimeoutError`` when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        status: dict[str, Any] | None = None
        while True:
            try:
                status = self.status()
            except NotFoundError:
                self.config()  # a connector that is gone: NotFoundError from here
                status = None
            if status is not None:
                states = [status["connector"], *status["tasks"]]
                failed = next((s for s in states if s["state"] == "FAILED"), None)
                if failed is not None:
                    raise ConnectError(
                        f"Connector {self.name} failed: {failed.get('trace', 'no trace')}"
                    )
                if status["tasks"] and all(s["state"] == "RUNNING" for s in states):
                    return status
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"Connector {self.name} was not RUNNING within {timeout:g} s: {status}"
                )
            time.sleep(_POLL_S)

    def offsets(self) -> dict[str, Any]:
        """``{"offsets": [{"partition": {...}, "offset": {...}}, ...]}`` (any state)."""
        return self._herder.connector_offsets(self.name)

    # -- writes -----------------------------------------------------------------------------
    def pause(self) -> None:
        self._herder.pause_connector(self.name)

    def resume(self) -> None:
        self._herder.resume_connector(self.name)

    def stop(self) -> None:
        """Stop the connector and its tasks (KIP-875): its offsets may then be changed."""
        call_leader(self._herder, lambda: self._herder.stop_connector(self.name),
                    "PUT", f"{self._path}/stop")  # fmt: skip

    def restart(self, include_tasks: bool = False, only_failed: bool = False) -> Any:
        """KIP-745: ``None`` for a connector-only restart, else the restart plan (REST 202
        body)."""
        query = f"?includeTasks={str(include_tasks).lower()}&onlyFailed={str(only_failed).lower()}"

        def local() -> Any:
            plan = self._herder.restart_connector(self.name, include_tasks, only_failed)
            return None if plan is None else plan.to_json()

        return call_leader(self._herder, local, "POST", f"{self._path}/restart{query}")

    def alter_offsets(self, offsets: Any) -> str:
        """``PATCH .../offsets`` of a stopped connector: ``offsets`` is the list of
        ``{"partition": ..., "offset": ...}`` (or the whole ``{"offsets": [...]}`` body).
        Returns Kafka's message."""
        body = offsets if isinstance(offsets, dict) else {"offsets": list(offsets)}
        answer = call_leader(
            self._herder,
            lambda: {"message": self._herder.alter_connector_offsets(self.name, body)},
            "PATCH", f"{self._path}/offsets", body,
        )  # fmt: skip
        return str(answer["message"])

    def reset_offsets(self) -> str:
        """``DELETE .../offsets`` of a stopped connector; returns Kafka's message."""
        answer = call_leader(
            self._herder,
            lambda: {"message": self._herder.reset_connector_offsets(self.name)},
            "DELETE", f"{self._path}/offsets",
        )  # fmt: skip
        return str(answer["message"])

    def delete(self) -> None:
        """Delete the connector: its tasks stop everywhere; its offsets stay."""
        call_leader(self._herder, lambda: self._herder.delete_connector(self.name),
                    "DELETE", self._path)  # fmt: skip


__all__ = ["Connector"]
