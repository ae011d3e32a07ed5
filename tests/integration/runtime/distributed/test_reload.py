"""Config-provider reloads in a distributed group: the worker that runs a connector restarts
it when a TTL expires with a changed value, whether it leads the group or not (Kafka's
``DistributedHerder.restartConnector(delayMs, ...)``).

Two members on the real broker with the real config/offset/status topics, group membership
and REST (followers send task configs to the leader over it); the engine is a double that
records plans and task restarts, so no Spark is needed: the connector instance runs in the
herder, and ``SecretSourceConnector.start`` writes what it received to a proof file.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.engine import PlanRecordingEngine
from tests.support.waiting import wait_for

from sparkcat.api.errors import NotFoundError
from sparkcat.assembly.connect_distributed import ConnectDistributed
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.forwarding import install
from sparkcat.runtime.distributed.herder import (
    DistributedHerder,
    NotAssignedError,
    NotLeaderError,
)
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.errors import ConnectRestError
from sparkcat.runtime.rest.server import RestServer

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PLUGINS = Path(__file__).parents[2] / "plugins"
KAFKA = "org.apache.kafka.common.config.provider."
OLD, NEW = "tok-old-7d1e", "tok-new-93b0"


def _member(props: dict[str, str]) -> ConnectDistributed:
    """A distributed member as ``sparkcat distributed`` assembles it, on the engine double."""
    config = DistributedConfig(props)
    member = ConnectDistributed(config)
    member.start_stores()
    member.engine = PlanRecordingEngine()
    member.process.on_shutdown("engine", member.engine.close)
    registry = default_registry(config.plugin_path())
    herder = DistributedHerder(config, member.engine, member.offsets, registry, "",
                               member.configs, member.statuses, "")  # fmt: skip
    app = create_app(herder)
    install(app, herder)
    member.rest = RestServer(app, "http://127.0.0.1:0").start()
    member.process.on_shutdown("REST server", member.rest.stop)
    herder.worker_id = f"127.0.0.1:{member.rest.port}"
    herder.rest_url = f"http://127.0.0.1:{member.rest.port}/"
    member.herder = herder
    member.process.on_shutdown("herder", herder.stop)
    herder.start()
    return member


@dataclass
class Group:
    members: list[ConnectDistributed]
    vault: Path
    proofs: Path

    def leader(self) -> DistributedHerder:
        return next(m.herder for m in self.members if m.herder.is_leader())

    def follower(self) -> ConnectDistributed:
        return next(m for m in self.members if not m.herder.is_leader())


@pytest.fixture
def group(kafka_broker: Any, unique_topic: Callable[[str], str], tmp_path: Path) -> Iterator[Group]:
    vault, proofs = tmp_path / "vault", tmp_path / "proofs"
    vault.mkdir()
    proofs.mkdir()
    (vault / "db.properties").write_text(f"token={OLD}\n", encoding="utf-8")
    props = {
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "group.id": f"reload-{uuid.uuid4().hex[:8]}",
        "config.storage.topic": unique_topic("configs"),
        "offset.storage.topic": unique_topic("offsets"),
        "status.storage.topic": unique_topic("status"),
        **{f"{k}.storage.replication.factor": "1" for k in ("config", "offset", "status")},
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "session.timeout.ms": "4000" if kafka_broker.embedded else "6000",
        "heartbeat.interval.ms": "1000",
        "rebalance.timeout.ms": "20000",
        "scheduled.rebalance.max.delay.ms": "3000",
        "plugin.path": str(PLUGINS),
        "config.providers": "file",
        "config.providers.file.class": KAFKA + "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(vault),
        "config.providers.file.ttl": "1000",
    }
    members: list[ConnectDistributed] = []
    try:
        members.append(_member(props))
        assert members[0].herder.wait_stable(60)
        members.append(_member(props))
        stable = lambda: all(m.herder.wait_stable(1) for m in members)  # noqa: E731
        one_leader = lambda: sum(m.herder.is_leader() for m in members) == 1  # noqa: E731
        wait_for(lambda: stable() and one_leader(), 90, "a stable group of two")
        yield Group(members, vault, proofs)
    finally:
        for member in reversed(members):
            member.stop()


def _config(group: Group, name: str) -> dict[str, str]:
    (group.proofs / name).mkdir()
    return {
        "connector.class": "sparkcat_secret_plugins:SecretSourceConnector",
        "tasks.max": "2",
        "topic": f"{name}-topic",
        "proof.dir": str(group.proofs / name),
        "token": f"${{file:{group.vault / 'db.properties'}:token}}",
    }


def _seen(group: Group, name: str) -> str | None:
    proof = group.proofs / name / "connector"
    return json.loads(proof.read_text(encoding="utf-8"))["token"] if proof.exists() else None


def _runs(member: ConnectDistributed, name: str) -> bool:
    herder = member.herder
    assignment = herder.assignment
    status = herder.status.get(name)
    return (
        assignment is not None
        and name in assignment.connectors
        and status is not None
        and status.state.value == "RUNNING"
        and status.worker_id == herder.worker_id
    )


def _create(group: Group, name: str, config: dict[str, str]) -> None:
    """Create through the leader, retrying while a rebalance is under way (Kafka's 409)."""

    def created() -> bool:
        try:
            group.leader().create_connector(name, config)
        except (StopIteration, ConnectRestError) as exc:
            if isinstance(exc, ConnectRestError) and exc.status != 409:
                raise
            return False
        return True

    wait_for(created, 60, f"{name} to be created")


def _settle(group: Group, names: list[str]) -> dict[str, ConnectDistributed]:
    """Wait until every connector of ``names`` runs with its two task configs in a group that
    is not rebalancing; the owner of each."""

    def settled() -> dict[str, ConnectDistributed] | None:
        owners = {n: m for n in names for m in group.members if _runs(m, n)}
        planned = all(len(m.herder.snapshot.all_task_configs(n)) == 2 for n in names
                      for m in group.members)  # fmt: skip
        stable = all(m.herder.wait_stable(0.1) for m in group.members)
        return owners if len(owners) == len(names) and planned and stable else None

    wait_for(settled, 90, f"{names} running with their task configs")
    time.sleep(3)  # a rebalance the last task configs asked for has begun by now
    return wait_for(settled, 90, f"{names} running in a settled group")


def test_a_follower_restarts_its_connector_when_a_file_value_changes(
    group: Group, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    configs = {name: _config(group, name) for name in ("reload-a", "reload-b")}
    for name, config in configs.items():
        _create(group, name, config)

    owners = _settle(group, list(configs))
    follower = group.follower()
    mine = [name for name, owner in owners.items() if owner is follower]
    assert mine, f"the assignor gave the follower no connector: {owners}"
    name = mine[0]
    assert _seen(group, name) == OLD
    before = list(follower.engine.restarts)

    (group.vault / "db.properties").write_text(f"token={NEW}\n", encoding="utf-8")

    # The follower restarts the connector it runs itself (no leader involved), within a TTL.
    wait_for(lambda: _seen(group, name) == NEW, 20, "the follower's connector to see the new value")
    assert not follower.herder.is_leader()
    wait_for(lambda: _runs(follower, name), 20, "the restarted connector RUNNING on the follower")
    plan = follower.engine.plans.get(name)
    local = [] if plan is None else plan.task_ids()
    wait_for(lambda: set(follower.engine.restarts[len(before):]) >= {(name, t) for t in local},
          10, "the follower's tasks of the connector restarted")  # fmt: skip
    assert all(c == name for c, _ in follower.engine.restarts[len(before) :])
    # Every connector reloads where it runs, the leader's too.
    for other in configs:
        wait_for(
            lambda other=other: _seen(group, other) == NEW,  # type: ignore[misc]
            20,
            f"{other} to see the new value",
        )

    # Stored and shown unresolved everywhere; the secret is in no log line.
    placeholder = configs[name]["token"]
    for member in group.members:
        assert member.herder.connector_config(name)["token"] == placeholder
        assert all(t.config["token"] == placeholder for t in member.herder.task_configs(name))
    assert "Could not restart connector" not in caplog.text
    assert OLD not in caplog.text and NEW not in caplog.text


def test_reload_requests_for_work_elsewhere_are_refused_as_in_kafka(group: Group) -> None:
    _create(group, "elsewhere", _config(group, "elsewhere"))
    owner = _settle(group, ["elsewhere"])["elsewhere"]
    leader = group.leader()
    follower = group.follower().herder
    with pytest.raises(NotFoundError, match=r"^Unknown connector: nope$"):
        follower.reload_connector("nope")
    if owner.herder is leader:
        with pytest.raises(NotLeaderError) as not_leader:
            follower.reload_connector("elsewhere")
        assert not_leader.value.leader_url == leader.rest_url
    else:
        with pytest.raises(NotAssignedError, match="not assigned to this member") as elsewhere:
            leader.reload_connector("elsewhere")
        assert elsewhere.value.owner_url == follower.rest_url
    owner.herder.reload_connector("elsewhere")  # where it runs, it restarts
    wait_for(lambda: _runs(owner, "elsewhere"), 20, "the connector RUNNING again")
