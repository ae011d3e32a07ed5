"""REST security: https listeners (PEM and PKCS12 stores, client auth), admin listeners,
Kafka's BasicAuthSecurityRestExtension, and the management CLI's --user/--cacert.

Real TLS: servers on loopback with certificates from a throw-away CA (tests.support.tls).
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.tls import P12_PASSWORD, Authority, make_ca

from sparkcat.cli_manage import manage_main
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.app import create_app
from sparkcat.runtime.rest.server import RestServer, parse_listener
from sparkcat.runtime.standalone.herder import StandaloneHerder
from sparkcat.runtime.stores.offsets import MemoryOffsetStore
from sparkcat.runtime.worker_config import WorkerConfig

from .conftest import WORKER_PROPS, TestClient

BASIC_AUTH = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return make_ca(tmp_path_factory.mktemp("ca"))


def _herder(props: dict[str, str], engine: Any) -> StandaloneHerder:
    herder = StandaloneHerder(
        WorkerConfig({**WORKER_PROPS, **props}), engine, MemoryOffsetStore(), PluginRegistry(),
        "test:8083",
    )  # fmt: skip
    herder.mark_ready()
    return herder


@pytest.fixture
def serve(engine: Any) -> Iterator[Any]:
    servers: list[RestServer] = []

    def start(props: dict[str, str]) -> RestServer:
        herder = _herder(props, engine)
        server = RestServer(
            create_app(herder), props["listeners"], herder.worker_config.originals()
        )
        servers.append(server.start())
        return server

    yield start
    for server in servers:
        server.stop()


def _https(ca: Authority, auth: str, pkcs12: bool = False) -> dict[str, str]:
    p = "listeners.https."
    if pkcs12:
        stores = {
            p + "ssl.keystore.type": "PKCS12", p + "ssl.keystore.location": str(ca.server.p12),
            p + "ssl.keystore.password": P12_PASSWORD,
            p + "ssl.truststore.type": "PKCS12", p + "ssl.truststore.location": str(ca.ca_p12),
            p + "ssl.truststore.password": P12_PASSWORD,
        }  # fmt: skip
    else:
        stores = {
            p + "ssl.keystore.type": "PEM", p + "ssl.keystore.location": str(ca.server.pem),
            p + "ssl.truststore.type": "PEM", p + "ssl.truststore.location": str(ca.ca),
        }  # fmt: skip
    return {"listeners": "https://127.0.0.1:0", p + "ssl.client.auth": auth, **stores}


def _context(ca: Authority, client_cert: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca.ca))
    if client_cert:
        context.load_cert_chain(str(ca.client.cert), str(ca.client.key))
    return context


def test_parse_listener_schemes() -> None:
    assert parse_listener("HTTPS://localhost:8443") == ("https", "localhost", 8443)
    assert parse_listener("http://:8083") == ("http", "0.0.0.0", 8083)


@pytest.mark.parametrize("pkcs12", [False, True], ids=["pem", "pkcs12"])
def test_https_with_client_auth_required(serve: Any, ca: Authority, pkcs12: bool) -> None:
    server = serve(_https(ca, "required", pkcs12))
    assert server.url.startswith("https://127.0.0.1:")
    with httpx.Client(verify=_context(ca, client_cert=True)) as client:
        assert client.get(f"{server.url}connectors").json() == []
    no_cert = httpx.Client(verify=_context(ca, client_cert=False))
    with no_cert, pytest.raises(httpx.TransportError):  # no client certificate: refused
        no_cert.get(f"{server.url}connectors")
    with pytest.raises(httpx.TransportError):  # plain HTTP to the TLS port
        httpx.get(server.url.replace("https://", "http://") + "connectors", timeout=5)
    with pytest.raises(httpx.TransportError):  # a server certificate nobody trusts
        httpx.get(f"{server.url}connectors", timeout=5)


def test_https_client_auth_requested_and_admin_listener(serve: Any, ca: Authority) -> None:
    server = serve({**_https(ca, "requested"), "admin.listeners": "http://127.0.0.1:0"})
    main, admin = server.urls
    with httpx.Client(verify=_context(ca, client_cert=False)) as client:
        assert client.get(f"{main}connectors").status_code == 200
        assert client.get(f"{main}admin/loggers").status_code == 404  # moved to admin.listeners
    assert admin.startswith("http://")
    assert httpx.get(f"{admin}admin/loggers", timeout=5).status_code == 200
    assert httpx.get(f"{admin}connectors", timeout=5).status_code == 404


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def auth_props(tmp_path: Path) -> dict[str, str]:
    users = tmp_path / "credentials.properties"
    users.write_text("alice=wonderland\nbob=builder\n", encoding="utf-8")
    jaas = tmp_path / "connect_jaas.conf"
    jaas.write_text(
        f'KafkaConnect {{\n  {LOGIN_MODULE} required\n  file="{users}";\n}};\n', encoding="utf-8"
    )
    return {"rest.extension.classes": BASIC_AUTH, "java.security.auth.login.config": str(jaas)}


def test_basic_auth_extension(engine: Any, auth_props: dict[str, str]) -> None:
    app = create_app(_herder(auth_props, engine))
    with TestClient(app, raise_server_exceptions=False) as client:
        for headers in ({}, _basic("alice", "wrong"), _basic("mallory", "wonderland"),
                        {"Authorization": "Bearer abc"}):  # fmt: skip
            denied = client.get("/connectors", headers=headers)
            assert (denied.status_code, denied.text) == (401, "User cannot access the resource.")
        assert client.get("/connectors", headers=_basic("alice", "wonderland")).json() == []
        assert client.get("/", headers=_basic("bob", "builder")).status_code == 200
        # Kafka's internal worker-to-worker endpoints are not authenticated (they are signed).
        internal = client.post("/connectors/c/tasks", json=[])
        assert internal.status_code != 401


def test_basic_auth_jaas_from_kafka_opts(
    engine: Any, auth_props: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    jaas = auth_props.pop("java.security.auth.login.config")
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1g -Djava.security.auth.login.config={jaas}")
    with TestClient(create_app(_herder(auth_props, engine))) as client:
        assert client.get("/connectors").status_code == 401
        assert client.get("/connectors", headers=_basic("bob", "builder")).status_code == 200


def test_cli_user_and_cacert_over_https_with_basic_auth(
    serve: Any, ca: Authority, auth_props: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve({**_https(ca, "none"), **auth_props})
    url = ["--url", server.url]
    assert manage_main(["connectors", "list", *url, "--cacert", str(ca.ca)]) == 2
    assert "User cannot access the resource." in capsys.readouterr().err
    args = ["connectors", "list", *url, "--cacert", str(ca.ca), "--user", "alice:wonderland"]
    assert manage_main([*args, "--json"]) == 0
    assert capsys.readouterr().out.strip() in ("{}", "[]", "")
    assert manage_main(["connectors", "list", *url, "--user", "alice:wonderland"]) == 2
    assert "cannot reach the worker" in capsys.readouterr().err  # untrusted certificate


def test_worker_to_worker_requests_over_https_with_basic_auth(
    serve: Any, ca: Authority, auth_props: dict[str, str]
) -> None:
    """What a follower's forwarding does (its RestClient with the worker's listener TLS
    settings, the user's Authorization copied): reaches a leader with TLS and auth on."""
    from sparkcat.runtime.rest.client import RestClient

    props = {**_https(ca, "required"), **auth_props}
    leader = serve(props)
    p = "listeners.https."
    follower = WorkerConfig({**WORKER_PROPS, **props,
                             p + "ssl.keystore.location": str(ca.client.pem)})  # fmt: skip
    client = RestClient(follower)
    url = f"{leader.url}connectors"
    assert client.send("GET", url, b"", {})[0] == 401
    status, body = client.send("GET", url, b"", _basic("alice", "wonderland"))
    assert (status, body) == (200, b"[]")
    # The internal endpoints need no credentials (Kafka's filter skips them).
    status, body = client.send(
        "POST", f"{url}/nope/tasks", b"[]", {"Content-Type": "application/json"}
    )
    assert status == 500  # past authentication: a standalone worker refuses it (Kafka)
    assert b"does not support externally setting task configurations" in body
    with pytest.raises(OSError):  # another worker's client does not trust this leader
        RestClient(WorkerConfig(WORKER_PROPS)).send("GET", url, b"", {})
