"""The standalone herder (Kafka's ``StandaloneHerder``): one worker process runs every
connector; configs and statuses live in memory, source offsets in the offset store."""

from __future__ import annotations

from sparkcat.runtime.herder.base import AbstractHerder


class StandaloneHerder(AbstractHerder):
    """Runs connectors in one worker process; the data plane is ``engine``."""


__all__ = ["StandaloneHerder"]
