"""The internal REST server of MirrorMaker's dedicated mode (Kafka's InternalMirrorResource):
only a flow's task-config and fence endpoints reach that flow's app, under the flow's path."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from sparkcat.assembly.mirror_maker import InternalMirrorRest, flow_path
from sparkcat.mirror_maker_config import SourceAndTarget


class Recorder:
    """A flow's app: records the method and path it was called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls.append((scope["method"], scope["path"]))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def request(app: InternalMirrorRest, method: str, path: str) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://node") as client:
            return await client.request(method, path, content=b"[]")

    return asyncio.run(go())


def test_task_configs_and_fence_reach_the_flow_without_its_prefix() -> None:
    rest, flow = InternalMirrorRest(), Recorder()
    rest.flows[("A", "B")] = flow
    assert request(rest, "POST", "/A/B/connectors/MirrorSourceConnector/tasks?forward=true")
    assert request(rest, "PUT", "/A/B/connectors/MirrorSourceConnector/fence").status_code == 204
    assert flow.calls == [
        ("POST", "/connectors/MirrorSourceConnector/tasks"),
        ("PUT", "/connectors/MirrorSourceConnector/fence"),
    ]


def test_an_unknown_flow_is_kafkas_404() -> None:
    rest = InternalMirrorRest()
    rest.flows[("A", "B")] = Recorder()
    answer = request(rest, "POST", "/B/A/connectors/MirrorSourceConnector/tasks")
    assert answer.status_code == 404
    assert answer.json() == {
        "error_code": 404,
        "message": "No replication flow found for source 'B' and target 'A'",
    }


def test_nothing_but_the_internal_endpoints_is_served() -> None:
    rest, flow = InternalMirrorRest(), Recorder()
    rest.flows[("A", "B")] = flow
    for method, path in [("GET", "/A/B/connectors"), ("GET", "/A/B/connectors/x/tasks"),
                         ("DELETE", "/A/B/connectors/x"), ("GET", "/")]:  # fmt: skip
        assert request(rest, method, path).status_code == 404
    assert flow.calls == []


def test_aliases_are_url_encoded_in_the_flow_path() -> None:
    pair = SourceAndTarget("us east", "eu/west")
    assert flow_path(pair) == "us%20east/eu%2Fwest"
    rest, flow = InternalMirrorRest(), Recorder()
    rest.flows[(pair.source, pair.target)] = flow
    assert request(rest, "POST", f"/{flow_path(pair)}/connectors/c/tasks").status_code == 204
    assert flow.calls == [("POST", "/connectors/c/tasks")]
