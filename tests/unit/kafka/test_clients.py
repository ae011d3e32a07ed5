"""Client config factories: Kafka Connect's layering, forced settings, Java-key translation."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

from sparkcat.kafka.clients import (
    CONSUMER_DEFAULTS,
    PRODUCER_DEFAULTS,
    admin_client_id,
    admin_config,
    consumer_client_id,
    consumer_config,
    consumer_group_id,
    producer_client_id,
    producer_config,
    to_librdkafka,
)

WORKER = {
    "bootstrap.servers": "broker-a:9092, broker-b:9092",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "listeners": "http://:8083",
    "offset.flush.interval.ms": "10000",
}


def test_client_ids_and_group_follow_kafka_connect() -> None:
    assert producer_client_id("local-file-source", 0) == "connector-producer-local-file-source-0"
    assert consumer_client_id("sink", 3) == "connector-consumer-sink-3"
    assert admin_client_id("src", 1) == "connector-adminclient-src-1"
    assert consumer_group_id("local-file-sink") == "connect-local-file-sink"


def test_producer_gets_framework_settings_and_tuned_defaults() -> None:
    config = producer_config(WORKER, None, producer_client_id("c", 0))
    assert config["bootstrap.servers"] == "broker-a:9092,broker-b:9092"
    assert config["client.id"] == "connector-producer-c-0"
    assert config["acks"] == "all"
    assert config["max.in.flight.requests.per.connection"] == "1"
    assert config["enable.idempotence"] == "false"
    assert config["delivery.timeout.ms"] == "2147483647"
    for key, value in PRODUCER_DEFAULTS.items():
        assert config[key] == value
    assert "key.converter" not in config  # worker keys do not leak into producers


def test_consumer_gets_framework_settings_and_tuned_defaults() -> None:
    config = consumer_config(WORKER, None, consumer_client_id("s", 0), consumer_group_id("s"))
    assert config["group.id"] == "connect-s"
    assert config["client.id"] == "connector-consumer-s-0"
    assert config["enable.auto.commit"] == "false"
    assert config["auto.offset.reset"] == "earliest"
    assert config["fetch.queue.backoff.ms"] == "10"
    for key, value in CONSUMER_DEFAULTS.items():
        assert config[key] == value


def test_worker_prefix_then_connector_override_win_in_order() -> None:
    worker = {**WORKER, "producer.linger.ms": "50", "producer.acks": "1", "consumer.linger.ms": "7"}
    connector = {"producer.override.linger.ms": "100", "consumer.override.acks": "0"}
    config = producer_config(worker, connector, "p")
    assert config["linger.ms"] == "100"  # connector override beats worker prefix
    assert config["acks"] == "1"  # worker prefix beats the framework (as in Kafka)


def test_consumer_override_group_id_replaces_connect_group() -> None:
    config = consumer_config(
        WORKER, {"consumer.override.group.id": "custom"}, "c", consumer_group_id("s")
    )
    assert config["group.id"] == "custom"


def test_admin_inherits_unprefixed_worker_client_keys_only() -> None:
    worker = {
        **WORKER,
        "security.protocol": "SASL_SSL",
        "producer.security.protocol": "PLAINTEXT",
        "admin.socket.timeout.ms": "1234",
    }
    config = admin_config(worker, {"admin.override.client.dns.lookup": "use_all_dns_ips"}, "a")
    assert config["security.protocol"] == "SASL_SSL"
    assert config["socket.timeout.ms"] == "1234"
    assert config["client.dns.lookup"] == "use_all_dns_ips"
    assert config["bootstrap.servers"] == "broker-a:9092,broker-b:9092"
    assert "listeners" not in config and "key.converter" not in config
    assert "offset.flush.interval.ms" not in config


def test_unprefixed_worker_security_does_not_reach_producer() -> None:
    # Kafka Connect: producers see only producer.* (not the worker's own security keys).
    config = producer_config({**WORKER, "security.protocol": "SSL"}, None, "p")
    assert "security.protocol" not in config


@pytest.mark.parametrize(
    ("java", "kind", "expected"),
    [
        ({"buffer.memory": "33554432"}, "producer", {"queue.buffering.max.kbytes": "32768"}),
        ({"max.request.size": "2097152"}, "producer", {"message.max.bytes": "2097152"}),
        ({"fetch.max.wait.ms": "100"}, "consumer", {"fetch.wait.max.ms": "100"}),
        ({"send.buffer.bytes": "-1"}, "producer", {"socket.send.buffer.bytes": "0"}),
        ({"receive.buffer.bytes": "65536"}, "consumer", {"socket.receive.buffer.bytes": "65536"}),
        ({"request.timeout.ms": "2147483647"}, "producer", {"request.timeout.ms": "900000"}),
        ({"request.timeout.ms": "40000"}, "consumer", {"socket.timeout.ms": "40000"}),
        ({"auto.offset.reset": "none"}, "consumer", {"auto.offset.reset": "error"}),
        ({"ssl.endpoint.identification.algorithm": ""}, "admin",
         {"ssl.endpoint.identification.algorithm": "none"}),
        ({"request.required.acks": "1"}, "producer", {"acks": "1"}),
        ({"queue.buffering.max.ms": "9"}, "producer", {"linger.ms": "9"}),
        ({"enable.auto.commit": True}, "consumer", {"enable.auto.commit": "true"}),
    ],
)  # fmt: skip
def test_java_keys_translate(java: dict[str, object], kind: str, expected: dict[str, str]) -> None:
    assert to_librdkafka(java, kind) == expected  # type: ignore[arg-type]


def test_assignment_strategy_maps_class_names_and_keeps_one_protocol() -> None:
    java = (
        "org.apache.kafka.clients.consumer.RangeAssignor,"
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
    )
    assert to_librdkafka({"partition.assignment.strategy": java}, "consumer") == {
        "partition.assignment.strategy": "range"
    }


def test_jaas_plain_login_becomes_username_and_password() -> None:
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="s3cr\\"et";'
    )
    assert to_librdkafka({"sasl.jaas.config": jaas}, "producer") == {
        "sasl.username": "alice",
        "sasl.password": 's3cr"et',
    }


def test_pem_truststore_becomes_ca_location_and_jks_is_dropped() -> None:
    pem = {"ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "PEM"}
    assert to_librdkafka(pem, "consumer") == {"ssl.ca.location": "/ca.pem"}
    assert to_librdkafka({"ssl.truststore.location": "/ca.jks"}, "consumer") == {}


def test_java_only_keys_are_dropped_with_a_debug_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkcat.kafka.clients")
    java = {
        "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
        "max.block.ms": "9223372036854775807",
        "linger.ms": "3",
    }
    assert to_librdkafka(java, "producer") == {"linger.ms": "3"}
    dropped = [r for r in caplog.records if "max.block.ms" in r.getMessage()]
    assert dropped and all(r.levelno == logging.DEBUG for r in dropped)


def test_unknown_keys_are_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sparkcat.kafka.clients")
    assert to_librdkafka({"no.such.setting": "1"}, "producer") == {}
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


def test_settings_of_another_client_kind_are_dropped() -> None:
    assert to_librdkafka({"fetch.min.bytes": "1", "linger.ms": "1"}, "producer") == {
        "linger.ms": "1"
    }
    assert to_librdkafka({"linger.ms": "1", "retries": "3"}, "admin") == {}


def test_configs_are_strings_and_accepted_by_librdkafka() -> None:
    # Every produced key must be one librdkafka accepts for that client kind: building the
    # clients (no broker needed) fails on an unknown or mistyped property.
    worker = {
        **WORKER,
        "producer.buffer.memory": "1048576",
        "producer.max.block.ms": "1000",
        "consumer.fetch.max.wait.ms": "50",
        "consumer.max.poll.records": "1000",
        "admin.request.timeout.ms": "20000",
    }
    producer = producer_config(worker, None, "p")
    consumer = consumer_config(worker, None, "c", "g")
    admin = admin_config(worker, None, "a")
    for config in (producer, consumer, admin):
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in config.items())
    Producer(producer).flush(0)
    Consumer(consumer).close()
    AdminClient(dict(admin))


def test_librdkafka_info_lines_stay_off_the_terminal() -> None:
    # librdkafka prints INFO lines (level 6) on stderr at shutdown; a quiet worker keeps them
    # out, as Kafka's Java clients keep theirs in the log file. The real clients accept it.
    for make, config in (
        (Producer, producer_config(WORKER, None, "p")),
        (Consumer, consumer_config(WORKER, None, "c", "g")),
        (AdminClient, admin_config(WORKER, None, "a")),
    ):
        assert config["log_level"] == "4"
        make(dict(config))


def test_security_keys_pass_through_to_every_client() -> None:
    security = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                "ssl.ca.location": "/etc/ca.pem"}  # fmt: skip
    worker = {**WORKER, **{f"{kind}.{k}": v for kind in ("producer", "consumer", "admin")
                           for k, v in security.items()}}  # fmt: skip
    for config in (producer_config(worker), consumer_config(worker), admin_config(worker)):
        assert {k: config[k] for k in security} == security


def test_config_provider_variables_resolve_in_client_configs(tmp_path: Path) -> None:
    (tmp_path / "kafka.properties").write_text("user=alice\npassword=s3cret\n")
    ref = f"${{file:{tmp_path / 'kafka.properties'}"
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{ref}:user}}" password="{ref}:password}}";'
    )
    worker = {
        **WORKER,
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "producer.sasl.jaas.config": jaas,
        "ssl.key.password": f"{ref}:password}}",
    }
    producer = producer_config(worker)
    assert (producer["sasl.username"], producer["sasl.password"]) == ("alice", "s3cret")
    assert admin_config(worker)["ssl.key.password"] == "s3cret"
    # A whole-value variable is resolved before the JAAS line is translated.
    plain = "org.apache.kafka.common.security.plain.PlainLoginModule required"
    (tmp_path / "jaas.properties").write_text(f'jaas={plain} username="bob" password="pw";\n')
    whole = f"${{file:{tmp_path / 'jaas.properties'}:jaas}}"
    overridden = producer_config(worker, {"producer.override.sasl.jaas.config": whole})
    assert (overridden["sasl.username"], overridden["sasl.password"]) == ("bob", "pw")
