from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.worker_config import WorkerConfig, lease_bounds, override_policy_name

BASE = {
    "key.converter": "JsonConverter",
    "value.converter": "JsonConverter",
    "offset.storage.file.filename": "/tmp/x.offsets",
}


def test_kafka_defaults() -> None:
    config = WorkerConfig(BASE)
    assert config.get_list("listeners") == ["http://:8083"]
    assert config.get_long("offset.flush.interval.ms") == 60000
    assert config.get_string("header.converter") == (
        "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    )
    assert config.get_string("connector.client.config.override.policy") == "All"
    assert config.get_boolean("topic.creation.enable") is True


@pytest.mark.parametrize("missing", sorted(BASE))
def test_required_keys(missing: str) -> None:
    props = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigError, match=f'Missing required configuration "{missing}"'):
        WorkerConfig(props)


@pytest.mark.parametrize(
    ("servers", "embedded"),
    [(None, True), ("embedded", True), ("", True), ("localhost:9092", False), ("a:1,b:2", False)],
)
def test_embedded_broker_when_no_servers(servers: str | None, embedded: bool) -> None:
    props = dict(BASE) if servers is None else {**BASE, "bootstrap.servers": servers}
    assert WorkerConfig(props).uses_embedded_broker is embedded


def test_with_bootstrap_servers() -> None:
    config = WorkerConfig(BASE).with_bootstrap_servers("127.0.0.1:1234")
    assert not config.uses_embedded_broker
    assert config.strings()["bootstrap.servers"] == "127.0.0.1:1234"


def test_sink_consumers_of_the_embedded_broker_wait_100_ms_for_data_unless_configured() -> None:
    from sparkcat.kafka.clients import consumer_config

    embedded = WorkerConfig(BASE).with_bootstrap_servers("127.0.0.1:1234").strings()
    assert consumer_config(embedded)["fetch.wait.max.ms"] == "100"
    own = {**BASE, "consumer.fetch.max.wait.ms": "250"}
    mine = WorkerConfig(own).with_bootstrap_servers("127.0.0.1:1234").strings()
    assert consumer_config(mine)["fetch.wait.max.ms"] == "250"
    assert "fetch.wait.max.ms" not in consumer_config(WorkerConfig(BASE).strings())


def test_spark_keys_pass_through() -> None:
    config = WorkerConfig({**BASE, "spark.executor.memory": "2g"})
    assert config.spark_conf() == {"spark.executor.memory": "2g", "spark.master": "local[*]"}
    assert WorkerConfig({**BASE, "spark.master": "local[2]"}).spark_conf()["spark.master"] == (
        "local[2]"
    )


def test_lease_bounds_worker_and_connector() -> None:
    config = WorkerConfig({**BASE, "max.batch.ms": "1000"})
    assert lease_bounds(config, {}) == (1000, 10_000_000)
    assert lease_bounds(config, {"max.batch.records": "10"}) == (1000, 10)
    with pytest.raises(ConfigError, match=r"max\.batch\.ms"):
        lease_bounds(config, {"max.batch.ms": "0"})


def test_invalid_values_use_kafka_messages() -> None:
    with pytest.raises(ConfigError, match=r"Invalid value x for configuration offset\.flush"):
        WorkerConfig({**BASE, "offset.flush.interval.ms": "x"})
    with pytest.raises(ConfigError, match=r"connector\.client\.config\.override\.policy"):
        WorkerConfig({**BASE, "connector.client.config.override.policy": "Some"})


def test_override_policy_names() -> None:
    assert override_policy_name("None") == "None"
    kafka = "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy"
    assert override_policy_name(kafka) == "Principal"
