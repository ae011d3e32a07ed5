"""MirrorMaker 2 (KIP-382) as Connect connectors: Kafka's ``org.apache.kafka.connect.mirror``.

Written against :mod:`sparkcat.api` and confluent-kafka only. The connectors talk to the
source and target clusters with their own clients; the records they return go to the
worker's cluster, which must be the target. See ``docs/connectors/mirror-maker.md``.
"""

from sparkcat.connectors.mirror.checkpoint_connector import MirrorCheckpointConnector
from sparkcat.connectors.mirror.checkpoint_task import MirrorCheckpointTask
from sparkcat.connectors.mirror.heartbeat_connector import MirrorHeartbeatConnector
from sparkcat.connectors.mirror.heartbeat_task import MirrorHeartbeatTask
from sparkcat.connectors.mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
)
from sparkcat.connectors.mirror.source_connector import MirrorSourceConnector
from sparkcat.connectors.mirror.source_task import MirrorSourceTask

__all__ = [
    "DefaultReplicationPolicy",
    "IdentityReplicationPolicy",
    "MirrorCheckpointConnector",
    "MirrorCheckpointTask",
    "MirrorHeartbeatConnector",
    "MirrorHeartbeatTask",
    "MirrorSourceConnector",
    "MirrorSourceTask",
    "ReplicationPolicy",
]
