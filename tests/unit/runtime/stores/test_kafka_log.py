"""The client configs of the internal-topic logs (no broker needed)."""

from __future__ import annotations

from pathlib import Path

from sparkcat.runtime.stores.kafka_log import internal_client_configs, log_consumer_config

WORKER = {
    "bootstrap.servers": "k1:9092, k2:9092",
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "PLAIN",
    "group.id": "connect-cluster",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "offset.storage.topic": "connect-offsets",
    "producer.acks": "0",
    "consumer.isolation.level": "read_uncommitted",
}


def test_internal_clients_take_the_workers_unprefixed_settings() -> None:
    producer, consumer, admin = internal_client_configs(WORKER, "connect-distributed-offsets")
    for config in (producer, consumer, admin):
        assert config["bootstrap.servers"] == "k1:9092,k2:9092"
        assert config["security.protocol"] == "SASL_SSL"
        assert config["sasl.mechanism"] == "PLAIN"
        assert config["client.id"] == "connect-distributed-offsets"
        assert "key.converter" not in config and "offset.storage.topic" not in config
    # producer.* / consumer.* are for connectors' clients, as in Kafka.
    assert producer.get("acks") != "0"
    assert consumer.get("isolation.level") != "read_uncommitted"
    # The Connect group is not the log consumer's group.
    assert "group.id" not in consumer
    assert producer["delivery.timeout.ms"] == "2147483647"


def test_log_consumer_settings_always_win() -> None:
    config = log_consumer_config(
        {"bootstrap.servers": "k:9092", "enable.auto.commit": "true", "group.instance.id": "x"}
    )
    assert config["enable.auto.commit"] == "false"
    assert config["isolation.level"] == "read_committed"
    assert config["fetch.queue.backoff.ms"] == "10"
    assert config["auto.offset.reset"] == "earliest"
    assert "group.instance.id" not in config
    assert config["group.id"]  # librdkafka needs one; the log never joins or commits


def test_internal_clients_resolve_config_provider_variables(tmp_path: Path) -> None:
    secrets = tmp_path / "kafka.properties"
    secrets.write_text("password=s3cret\n", encoding="utf-8")
    login = "org.apache.kafka.common.security.plain.PlainLoginModule required"
    worker = {
        "bootstrap.servers": "b:9092",
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{login} username="u" password="${{file:{secrets}:password}}";',
    }
    for config in internal_client_configs(worker, "store"):
        assert (config["security.protocol"], config["sasl.password"]) == ("SASL_SSL", "s3cret")
