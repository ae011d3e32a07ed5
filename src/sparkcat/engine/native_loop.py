"""The lifecycle both Spark-native connector handles share: one thread per connector that
runs a cycle (plan, Spark job, commit) at a time, with pause, resume, restart, plan
replacement and stop as the engine asks (:class:`NativeSinkQuery`, :class:`NativeSourceQuery`).

A cycle is one batch job in the connector's own job group and scheduler pool, so ``stop`` can
cancel a job still running after its timeout; replacing the plan first waits for the cycle in
flight (bounded), so a plan never changes under a running job.

The plan holds the connector config as stored, with its ``${provider:path:key}`` variables;
:meth:`NativeLoop._config` resolves them with the worker's providers at the last moment,
each cycle, on the driver, for what is handed to Spark (options, path, table) and to the
record pipeline. Offsets keep the unresolved form, and a failure's trace has every resolved
value put back into its ``${...}`` form before it is logged or reported.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.engine.session import POOL
from sparkcat.runtime.config_provider import resolve, resolve_worker, scrubber
from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener

log = logging.getLogger(__name__)


class NativeLoop:
    """Base of the native handles; subclasses give :meth:`_cycle` and the hooks below."""

    kind = ""

    def __init__(
        self,
        session: Any,
        plan: ConnectorPlan,
        listener: EngineListener,
        worker_config: Mapping[str, str],
    ) -> None:
        self.name = plan.name
        self._session = session
        self._listener = listener
        self._worker = {k: v for k, v in worker_config.items() if not k.startswith("spark.")}
        self._lock = threading.Condition()
        self._plan = plan
        self._paused = plan.paused
        self._failed = False
        self._busy = False
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: str | None = None

    # -- the engine's handle ----------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"native-{self.name}", daemon=True)
        self._thread.start()
        if self._paused:
            self._each_task(self._listener.on_task_paused)
        else:
            self._started()

    def wait_started(self, timeout_s: float) -> None:
        """Nothing to wait for: the loop starts its Spark jobs itself."""

    def replace_plan(self, plan: ConnectorPlan, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._paused = True
            while self._busy and time.monotonic() < deadline:
                self._lock.wait(0.2)
            self._plan = plan
            self._paused = plan.paused
            self._failed = False
            self._forget()
            self._lock.notify_all()

    def pause(self) -> None:
        with self._lock:
            self._paused = True
        self._each_task(self._listener.on_task_paused)

    def resume(self) -> None:
        with self._lock:
            self._paused = False
            self._lock.notify_all()
        if not self._failed:
            self._each_task(self._listener.on_task_running)

    def restart_task(self, task: int) -> None:
        with self._lock:
            self._failed = False
            self._restarted()
            self._lock.notify_all()

    def stop(self, timeout_s: float) -> None:
        self._closing.set()
        with self._lock:
            self._lock.notify_all()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            if thread.is_alive():
                log.warning("%s: the Spark job in flight did not end in %.0f s; cancelling it",
                            self.name, timeout_s)  # fmt: skip
                self._session.sparkContext.cancelJobGroup(self._job_group())
                thread.join(timeout_s)
        self._stopped()

    def tick(self) -> None:
        """The loop runs on its own thread."""

    # -- for subclasses ---------------------------------------------------------------------

    def _cycle(self) -> int:
        """One round; how much it moved (0: nothing to do, wait :meth:`_idle_wait_s`)."""
        raise NotImplementedError

    def _idle_wait_s(self) -> float:
        return 0.2

    def _tasks(self) -> Sequence[int]:
        return self._plan.task_ids()

    def _started(self) -> None:
        """Called when the loop starts unpaused."""

    def _forget(self) -> None:
        """Drop per-plan state (under the lock): a new plan, or a failure."""

    def _restarted(self) -> None:
        """A task restart was asked for (under the lock)."""

    def _stopped(self) -> None:
        """The loop has ended: release clients."""

    def _interrupted(self) -> bool:
        """Whether a cycle that waits should end its wait: a stop, a pause or a new plan."""
        return self._closing.is_set() or self._paused

    def _config(self) -> dict[str, str]:
        """The plan's connector config with its variables resolved (a copy, never stored)."""
        return resolve(self._worker, self._plan.connector_config)

    def _worker_config(self) -> dict[str, str]:
        """The worker config with its variables resolved (provider definitions as they are)."""
        return resolve_worker(self._worker)

    # -- internals ---------------------------------------------------------------------------

    def _job_group(self) -> str:
        return f"sparkcat-native-{self.name}"

    def _each_task(self, callback: Any, *args: Any) -> None:
        for task in self._tasks():
            callback(self.name, task, *args)

    def _run(self) -> None:
        sc = self._session.sparkContext
        sc.setLocalProperty("spark.scheduler.pool", POOL)
        sc.setJobGroup(self._job_group(), f"sparkcat connector {self.name}", True)
        while not self._closing.is_set():
            with self._lock:
                if self._paused or self._failed:
                    self._lock.wait(1.0)
                    continue
                self._busy = True
            moved = 0
            try:
                moved = self._cycle()
            except Exception:
                trace = scrubber(self._worker, self._plan.connector_config)(traceback.format_exc())
                if self._closing.is_set():
                    break
                log.error("Connector %s failed: %s", self.name, trace)
                with self._lock:
                    self._failed = True
                    self._forget()
                self._each_task(self._listener.on_task_failed, trace)
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()
            if not moved:
                self._closing.wait(self._idle_wait_s())
