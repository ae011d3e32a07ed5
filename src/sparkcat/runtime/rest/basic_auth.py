"""Kafka's ``BasicAuthSecurityRestExtension``: HTTP Basic authentication of REST requests.

As in Kafka, the users come from a JAAS configuration whose ``KafkaConnect`` entry names
``org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule`` with a
``file`` option: a ``.properties`` file of ``user=password`` lines (an empty file lets
every request through, with a warning)::

    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/connect/credentials.properties";
    };

The JAAS file is found where Kafka users put it: ``-Djava.security.auth.login.config=<path>``
in ``KAFKA_OPTS``, or sparkcat's worker key ``java.security.auth.login.config``. A request
without valid credentials gets ``401`` with Kafka's body ``User cannot access the
resource.``; the internal worker-to-worker requests (``POST /connectors/{c}/tasks``,
``PUT /connectors/{c}/fence``) are exempt, as in Kafka (they are signed instead).
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
import shlex
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from sparkcat.api.errors import ConfigError
from sparkcat.kafka.properties import load_properties
from sparkcat.runtime.rest.extension import ConnectRestExtension, ConnectRestExtensionContext

log = logging.getLogger(__name__)

JAAS_CONFIG_PROPERTY = "java.security.auth.login.config"
LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
CONNECT_LOGIN_CONTEXT = "KafkaConnect"
UNAUTHORIZED_MESSAGE = "User cannot access the resource."
_INTERNAL = [
    ("POST", re.compile(r"^/?connectors/([^/]+)/tasks/?$")),
    ("PUT", re.compile(r"^/?connectors/[^/]+/fence/?$")),
]
_ENTRY = re.compile(r"(\w+)\s*\{(.*?)\}\s*;", re.S)
_OPTION = re.compile(r'([\w.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))')

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def jaas_config_path(worker: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """Where the JAAS file is: the worker key, else ``-D...=path`` in ``KAFKA_OPTS``."""
    configured = worker.get(JAAS_CONFIG_PROPERTY)
    if configured:
        return str(configured)
    opts = (os.environ if env is None else env).get("KAFKA_OPTS", "")
    for word in shlex.split(opts):
        if word.startswith(f"-D{JAAS_CONFIG_PROPERTY}="):
            return word.split("=", 1)[1]
    raise ConfigError(
        "Failed to retrieve JAAS configuration: no java.security.auth.login.config "
        "(set -Djava.security.auth.login.config=<file> in KAFKA_OPTS or the worker key)"
    )


def credentials_file(jaas_text: str) -> str:
    """The ``file`` option of the ``KafkaConnect`` entry's PropertyFileLoginModule."""
    for name, body in _ENTRY.findall(jaas_text):
        if name != CONNECT_LOGIN_CONTEXT:
            continue
        words = body.split()
        if not words or words[0] != LOGIN_MODULE:
            raise ConfigError(
                f"Unsupported JAAS login module {words[0] if words else ''!r}: sparkcat's "
                f"BasicAuthSecurityRestExtension supports {LOGIN_MODULE}"
            )
        options: dict[str, str] = {k: (q or u) for k, q, u in _OPTION.findall(body)}
        file = str(options.get("file", "")).strip()
        if not file:
            raise ConfigError("Property Credentials file must be specified")
        return file
    raise ConfigError(f"No JAAS configuration section named '{CONNECT_LOGIN_CONTEXT}' was found")


def parse_credentials(header: str | None) -> tuple[str | None, str | None]:
    """``(user, password)`` of a ``Basic`` Authorization header (``None``s when malformed)."""
    if not header:
        return None, None
    method, _, encoded = header.partition(" ")
    if not encoded or method.lower() != "basic":
        return None, None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    user, sep, password = decoded.partition(":")
    if not sep or not user:
        return None, None
    return user, password


class BasicAuthFilter:
    """ASGI middleware: Kafka's ``JaasBasicAuthFilter`` over a credentials map."""

    def __init__(self, app: ASGIApp, users: Mapping[str, str]) -> None:
        self.app = app
        self.users = dict(users)

    def authenticated(self, header: str | None) -> bool:
        if not self.users:
            return True
        user, password = parse_credentials(header)
        return user is not None and password is not None and self.users.get(user) == password

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._internal(scope):
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                header = value.decode("latin-1")
        if self.authenticated(header):
            await self.app(scope, receive, send)
            return
        log.debug("Request failed authentication")
        body = UNAUTHORIZED_MESSAGE.encode()
        headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _internal(scope: Scope) -> bool:
        method, path = scope.get("method", ""), scope.get("path", "")
        return any(method == m and pattern.match(path) for m, pattern in _INTERNAL)


class BasicAuthSecurityRestExtension(ConnectRestExtension):
    """``org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension``."""

    def __init__(self) -> None:
        self.users: dict[str, str] = {}

    def configure(self, configs: Mapping[str, Any]) -> None:
        jaas = Path(jaas_config_path(configs))
        try:
            file = credentials_file(jaas.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"Failed to retrieve JAAS configuration: {exc}") from exc
        try:
            self.users = load_properties(file)
        except OSError as exc:
            log.error("Error loading credentials file %s: %s", file, exc)
            raise ConfigError("Error loading Property Credentials file") from exc
        if not self.users:
            log.warning(
                "Credential properties file '%s' is empty; all requests will be permitted", file
            )

    def register(self, context: ConnectRestExtensionContext) -> None:
        context.app.add_middleware(BasicAuthFilter, users=self.users)


__all__ = [
    "UNAUTHORIZED_MESSAGE",
    "BasicAuthFilter",
    "BasicAuthSecurityRestExtension",
    "credentials_file",
    "jaas_config_path",
    "parse_credentials",
]
