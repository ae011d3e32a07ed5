"""Replication policies: Kafka's naming rules, including Java's split edge cases."""

from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.connectors.mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    replication_policy,
)


def default(**props: str) -> DefaultReplicationPolicy:
    policy = DefaultReplicationPolicy()
    policy.configure(props)
    return policy


def test_default_names_remote_topics_after_the_source() -> None:
    policy = default()
    assert policy.format_remote_topic("A", "orders") == "A.orders"
    assert policy.topic_source("A.orders") == "A"
    assert policy.upstream_topic("B.A.orders") == "A.orders"
    assert policy.original_topic("B.A.orders") == "orders"


@pytest.mark.parametrize(("topic", "source"), [("orders", None), ("A.", None), (".x", "")])
def test_default_topic_source_edge_cases(topic: str, source: str | None) -> None:
    assert default().topic_source(topic) == source


def test_custom_separator_applies_to_internal_topics() -> None:
    policy = default(**{"replication.policy.separator": "_"})
    assert policy.format_remote_topic("A", "t") == "A_t"
    assert policy.offset_syncs_topic("B") == "mm2-offset-syncs_B_internal"
    assert policy.checkpoints_topic("A") == "A_checkpoints_internal"
    assert policy.is_checkpoints_topic("A_checkpoints_internal")


def test_internal_separator_can_stay_a_dot() -> None:
    policy = default(
        **{
            "replication.policy.separator": "_",
            "replication.policy.internal.topic.separator.enabled": "false",
        }
    )
    assert policy.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert policy.checkpoints_topic("A") == "A.checkpoints.internal"


def test_internal_and_heartbeat_topics() -> None:
    policy = default()
    assert policy.is_heartbeats_topic("heartbeats")
    assert policy.is_heartbeats_topic("B.A.heartbeats")
    assert not policy.is_heartbeats_topic("A.orders")
    for topic in ("__consumer_offsets", ".hidden", "connect-offsets-internal", "x.internal"):
        assert policy.is_internal_topic(topic)
    assert not policy.is_internal_topic("orders")


def test_identity_keeps_names_except_heartbeats() -> None:
    policy = IdentityReplicationPolicy()
    policy.configure({"source.cluster.alias": "A"})
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert policy.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert policy.topic_source("orders") == "A"
    assert policy.upstream_topic("orders") == "orders"
    assert policy.original_topic("orders") == "orders"
    assert policy.topic_source("A.heartbeats") == "A"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("org.apache.kafka.connect.mirror.DefaultReplicationPolicy", DefaultReplicationPolicy),
        ("org.apache.kafka.connect.mirror.IdentityReplicationPolicy", IdentityReplicationPolicy),
        ("IdentityReplicationPolicy", IdentityReplicationPolicy),
        ("sparkcat.connectors.mirror.policy:IdentityReplicationPolicy", IdentityReplicationPolicy),
    ],
)
def test_policy_class_names(name: str, kind: type) -> None:
    assert type(replication_policy({"replication.policy.class": name})) is kind


def test_unknown_policy_class() -> None:
    with pytest.raises(ConfigError, match=r"replication\.policy\.class"):
        replication_policy({"replication.policy.class": "no.such.Policy"})
