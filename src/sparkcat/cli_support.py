"""What the standalone and distributed command lines share (neither imports the other)."""

from __future__ import annotations

import logging
import sys

from sparkcat.runtime.worker_config import WorkerConfig

log = logging.getLogger("sparkcat")


def setup_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )
    for noisy in ("py4j", "uvicorn.error"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def cluster_id(config: WorkerConfig) -> str | None:
    try:
        from confluent_kafka.admin import AdminClient

        from sparkcat.kafka.clients import admin_config

        conf: dict[str, str | int | float | bool] = {**admin_config(config.strings())}
        admin = AdminClient(conf)
        return str(admin.describe_cluster(request_timeout=5).result(timeout=5).cluster_id)
    except Exception:
        log.warning("Could not read the Kafka cluster id", exc_info=True)
        return None


__all__ = ["cluster_id", "setup_logging"]
