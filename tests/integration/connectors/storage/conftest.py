"""Fixtures of the storage-sink tests: moto's S3 server on loopback (one per session) and the
broker's address; the topic of orders they copy comes from ``tests/support/orders.py``."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from sparkcat.runtime.tasks import client_cache


@dataclass(frozen=True, slots=True)
class S3Server:
    endpoint: str

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def new_bucket(self) -> str:
        bucket = f"b-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 HTTP API on a free 127.0.0.1 port, for the whole session."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        server.stop()


@pytest.fixture(scope="module")
def servers(kafka_broker: Any) -> Iterator[str]:
    yield kafka_broker.bootstrap_servers
    client_cache.close_all()
