from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.runtime.distributed.config import DistributedConfig
from sparkcat.runtime.distributed.protocol import ConnectProtocolCompatibility

BASE = {
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "group.id": "connect-cluster",
    "config.storage.topic": "connect-configs",
    "offset.storage.topic": "connect-offsets",
    "status.storage.topic": "connect-status",
}


def test_kafka_defaults() -> None:
    config = DistributedConfig(BASE)
    assert config.group_id == "connect-cluster"
    assert (config.config_topic, config.offsets_topic, config.status_topic) == (
        "connect-configs",
        "connect-offsets",
        "connect-status",
    )
    assert config.get_int("offset.storage.partitions") == 25
    assert config.get_int("status.storage.partitions") == 5
    for kind in ("config", "offset", "status"):
        assert config.get(f"{kind}.storage.replication.factor") == 3
    assert config.get_int("session.timeout.ms") == 10_000
    assert config.get_int("heartbeat.interval.ms") == 3_000
    assert config.get_int("rebalance.timeout.ms") == 60_000
    assert config.get_int("scheduled.rebalance.max.delay.ms") == 300_000
    assert config.get_int("worker.sync.timeout.ms") == 3_000
    assert config.get_int("worker.unsync.backoff.ms") == 300_000
    assert config.get_int("inter.worker.key.ttl.ms") == 3_600_000
    assert config.get_string("inter.worker.key.generation.algorithm") == "HmacSHA256"
    assert config.get_string("inter.worker.signature.algorithm") == "HmacSHA256"
    assert config.get_list("inter.worker.verification.algorithms") == ["HmacSHA256"]
    assert config.get("inter.worker.key.size") is None
    assert config.get_long("offset.flush.interval.ms") == 60_000
    assert config.connect_protocol is ConnectProtocolCompatibility.SESSIONED
    assert config.exactly_once_source_support == "disabled"
    assert not config.transactional_leader_enabled
    assert config.transactional_producer_id == "connect-cluster-connect-cluster"
    # The standalone-only key is not required here.
    assert "offset.storage.file.filename" not in config.definition.config_keys()


@pytest.mark.parametrize(
    "missing", ["group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"]
)
def test_required_keys(missing: str) -> None:
    props = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigError) as info:
        DistributedConfig(props)
    assert (
        str(info.value) == f'Missing required configuration "{missing}" which has no default value.'
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("connect.protocol", "cooperative",
         "Invalid value cooperative for configuration connect.protocol: "
         "Invalid Connect protocol compatibility"),
        ("offset.storage.partitions", "0",
         "Invalid value 0 for configuration offset.storage.partitions: Number of partitions "
         "must be positive, or -1 to use the broker's default"),
        ("status.storage.replication.factor", "-2",
         "Invalid value -2 for configuration status.storage.replication.factor: Replication "
         "factor must be positive and not larger than the number of brokers in the Kafka "
         "cluster, or -1 to use the broker's default"),
        ("scheduled.rebalance.max.delay.ms", "-1",
         "Invalid value -1 for configuration scheduled.rebalance.max.delay.ms: Value must be "
         "at least 0"),
        ("exactly.once.source.support", "maybe",
         "Invalid value maybe for configuration exactly.once.source.support: String must be "
         "one of: disabled, preparing, enabled"),
        ("inter.worker.verification.algorithms", "HmacSHA512",
         "Invalid value HmacSHA256 for configuration inter.worker.signature.algorithm: "
         "Signature algorithm must be present in inter.worker.verification.algorithms list"),
        ("inter.worker.key.size", "16",
         "Unable to create key generator with algorithm HmacSHA256 and key size 16: Key "
         "length must be at least 40 bits"),
        ("session.timeout.ms", "ten", None),
    ],
)  # fmt: skip
def test_bad_values_one_line(key: str, value: str, message: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        DistributedConfig({**BASE, key: value})
    text = str(info.value)
    assert "\n" not in text
    if message is not None:
        assert text == message
    else:
        assert key in text


def test_unknown_algorithm_lists_supported() -> None:
    with pytest.raises(ConfigError) as info:
        DistributedConfig({**BASE, "inter.worker.signature.algorithm": "HmacFoo"})
    assert str(info.value).startswith(
        "Invalid value HmacFoo for configuration inter.worker.signature.algorithm: the "
        "algorithm is not supported by this worker; the supported algorithms are: "
    )
    assert "HmacSHA512" in str(info.value)


def test_protocol_modes_case_insensitive() -> None:
    for name, mode in [("EAGER", ConnectProtocolCompatibility.EAGER),
                       ("compatible", ConnectProtocolCompatibility.COMPATIBLE)]:  # fmt: skip
        assert DistributedConfig({**BASE, "connect.protocol": name}).connect_protocol is mode


def test_topic_settings_drop_managed_keys() -> None:
    config = DistributedConfig({
        **BASE, "config.storage.partitions": "3", "config.storage.cleanup.policy": "delete",
        "config.storage.min.insync.replicas": "2",
    })  # fmt: skip
    assert config.topic_settings("config.storage.") == {"min.insync.replicas": "2"}


def test_advertised_url() -> None:
    config = DistributedConfig(BASE)
    assert config.advertised_url("h", 8083) == "http://h:8083/"
    config = DistributedConfig({
        **BASE, "listeners": "https://:8443", "rest.advertised.host.name": "w1",
        "rest.advertised.port": "9000",
    })  # fmt: skip
    assert config.advertised_url("h", 8443) == "https://w1:9000/"


def test_with_bootstrap_servers_keeps_type() -> None:
    config = DistributedConfig(BASE).with_bootstrap_servers("127.0.0.1:9")
    assert isinstance(config, DistributedConfig)
    assert config.group_id == "connect-cluster"
    assert config.strings()["consumer.fetch.max.wait.ms"] == "100"  # the embedded broker's
