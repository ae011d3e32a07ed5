"""ConnectorPlan: which tasks a plan runs on this worker."""

from __future__ import annotations

from sparkcat.runtime.engine_api import ConnectorPlan

CONFIGS = [{"task.class": "x"}, {"task.class": "x"}, {"task.class": "x"}]


def test_a_plan_without_tasks_runs_every_task() -> None:
    assert ConnectorPlan("c", "source", {}, CONFIGS).task_ids() == [0, 1, 2]


def test_a_plan_runs_only_the_tasks_it_names_that_have_configs() -> None:
    plan = ConnectorPlan("c", "source", {}, CONFIGS, tasks=(2, 0, 7))
    assert plan.task_ids() == [2, 0]


def test_plans_differing_only_in_their_tasks_are_different() -> None:
    one = ConnectorPlan("c", "sink", {}, CONFIGS, 3, tasks=(0,))
    assert one != ConnectorPlan("c", "sink", {}, CONFIGS, 3, tasks=(0, 1))
    assert one == ConnectorPlan("c", "sink", {}, CONFIGS, 3, tasks=(0,))
