"""An :class:`~sparkcat.runtime.engine_api.Engine` double for control-plane tests: it keeps
the plans the herder hands it and runs nothing, so a test plays the engine's part by calling
the listener (the herder) as the Spark engine does after a lease."""

from __future__ import annotations

from dataclasses import dataclass, field

from sparkcat.runtime.engine_api import ConnectorPlan, EngineListener


@dataclass
class PlanRecordingEngine:
    """The plans currently handed to the engine, by connector name."""

    plans: dict[str, ConnectorPlan] = field(default_factory=dict)
    stopped: list[str] = field(default_factory=list)

    def start_connector(self, plan: ConnectorPlan, listener: EngineListener) -> None:
        self.plans[plan.name] = plan

    def pause_connector(self, name: str) -> None:
        pass

    def resume_connector(self, name: str) -> None:
        pass

    def restart_task(self, name: str, task: int) -> None:
        pass

    def stop_connector(self, name: str) -> None:
        self.plans.pop(name, None)
        self.stopped.append(name)

    def close(self) -> None:
        self.plans.clear()
