"""Config providers end to end: ``${file:...}`` and ``${env:...}`` in a connector config.

One ``sparkcat standalone`` worker (shipped config, embedded broker) runs a test connector
whose ``start`` (worker) and task ``start`` (Spark executor) record what they received. They
must see the resolved values; the REST API, the offsets file and the worker's log must only
ever show the ``${...}`` form (grepped for the secrets themselves).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.ports import free_port
from tests.support.worker_process import (
    CONFIG_DIR,
    PLUGINS_DIR,
    WorkerProcess,
    edit_properties,
    spark_test,
    wait_for,
    write_properties,
)

TOKEN = "tok-3f9a1c77-file-secret"
USER = "usr-b2e4d8aa-env-secret"
ENV_VAR = "SPARKCAT_TEST_SECRET_USER"
CONNECTOR = "secret-source"
KAFKA = "org.apache.kafka.common.config.provider."


@dataclass
class Secrets:
    worker: WorkerProcess
    dir: Path
    proof: Path
    offsets: Path
    placeholders: dict[str, str]


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secrets]:
    d = tmp_path_factory.mktemp("providers")
    vault, proof = d / "vault", d / "proof"
    vault.mkdir()
    proof.mkdir()
    (vault / "db.properties").write_text(f"token={TOKEN}\n", encoding="utf-8")
    offsets = d / "connect.offsets"
    worker_props = edit_properties(
        CONFIG_DIR / "connect-standalone.properties",
        d / "connect-standalone.properties",
        {
            "offset.storage.file.filename": str(offsets),
            "offset.flush.interval.ms": "500",
            "listeners": f"http://127.0.0.1:{free_port()}",
            "plugin.path": str(PLUGINS_DIR),
            "max.batch.ms": "1000",
            "config.providers": "file,env",
            "config.providers.file.class": KAFKA + "FileConfigProvider",
            "config.providers.file.param.allowed.paths": str(vault),
            "config.providers.env.class": KAFKA + "EnvVarConfigProvider",
            "config.providers.env.param.allowlist.pattern": "SPARKCAT_TEST_.*",
        },
    )
    placeholders = {
        "token": f"${{file:{vault / 'db.properties'}:token}}",
        "user": f"${{env:{ENV_VAR}}}",
    }
    connector = write_properties(
        d / "secret-source.properties",
        {
            "name": CONNECTOR,
            "connector.class": "sparkcat_secret_plugins:SecretSourceConnector",
            "tasks.max": "1",
            "topic": "secret-topic",
            "proof.dir": str(proof),
            **placeholders,
        },
    )
    mp = pytest.MonkeyPatch()
    mp.setenv(ENV_VAR, USER)  # the worker (and so its Spark executors) inherit it
    worker = WorkerProcess(worker_props, [connector], d / "worker.log").start()
    mp.undo()
    try:
        yield Secrets(worker, d, proof, offsets, placeholders)
    finally:
        worker.cleanup()


def _proof(path: Path) -> dict[str, str] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@spark_test
def test_connector_and_task_run_with_resolved_values_shown_nowhere(secrets: Secrets) -> None:
    worker = secrets.worker
    worker.wait_running(CONNECTOR)
    expected = {"token": TOKEN, "user": USER, "topic": "secret-topic"}
    wait_for(lambda: _proof(secrets.proof / "task-0"), 240, "the task to start", worker=worker)
    assert _proof(secrets.proof / "connector") == expected  # Connector.start, on the worker
    assert _proof(secrets.proof / "task-0") == expected  # SourceTask.start, on an executor
    wait_for(secrets.offsets.exists, 60, "the offsets file", worker=worker)

    config = worker.get(f"/connectors/{CONNECTOR}/config")
    tasks = worker.get(f"/connectors/{CONNECTOR}/tasks")
    tasks_config = worker.get(f"/connectors/{CONNECTOR}/tasks-config")
    expanded = worker.get("/connectors?expand=info")
    for shown in (config, tasks[0]["config"], tasks_config[f"{CONNECTOR}-0"]):
        assert {k: shown[k] for k in secrets.placeholders} == secrets.placeholders
    plugin = config["connector.class"]
    answer = worker.client.put(f"/connector-plugins/{plugin}/config/validate", json=config)
    assert answer.status_code == 200, answer.text
    validated = answer.json()
    values = {c["value"]["name"]: c["value"]["value"] for c in validated["configs"]}
    assert values["token"] == "[hidden]"  # a PASSWORD key, as Kafka shows it
    assert values["user"] == secrets.placeholders["user"]
    assert validated["error_count"] == 0

    answers = json.dumps([config, tasks, tasks_config, expanded, validated])
    stored = secrets.offsets.read_bytes()
    log = worker.log_text()
    for secret in (TOKEN, USER):
        assert secret not in answers
        assert secret.encode() not in stored
        assert secret not in log
