"""The command line: ``sparkcat standalone WORKER.properties [CONNECTOR ...]``
(``sparkcat distributed WORKER.properties`` is :mod:`sparkcat.cli_distributed`).

Also installed as ``connect-standalone`` (Kafka's script name, same arguments) and answers
``sparkcat --version``. Connector files are Java ``.properties`` (with ``name``), a flat JSON
object of strings (with ``name``), or a JSON create request
``{"name", "config", "initial_state", "initial_offsets"}`` whose ``config.name``, if given,
must match ``name``.

Exit codes: 0 after a graceful shutdown (SIGINT/SIGTERM); 2 for a usage error or an
unreadable/invalid worker or connector file — one line ``sparkcat: <reason>`` on stderr and
nothing started (connector configs are validated before the broker and Spark start); 3 when
a connector fails to be created after start-up (Kafka's code). Kafka uses exit code 1 for
usage errors; 2 is the Unix convention for bad arguments.

This module reads the command line and the files; the worker itself, its start-up and
shutdown order and its signal handling are :mod:`sparkcat.assembly.connect_standalone`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sparkcat
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.assembly.connect_standalone import ConnectorRequest, ConnectStandalone
from sparkcat.assembly.process import prepare_process
from sparkcat.kafka.properties import load_properties
from sparkcat.runtime.herder.validation import (
    check_connector_name,
    ensure_valid,
    validate_connector_config,
)
from sparkcat.runtime.isolation.plugins import default_registry
from sparkcat.runtime.worker_config import WorkerConfig

USAGE = "usage: sparkcat standalone WORKER.properties [CONNECTOR.properties|CONNECTOR.json ...]"


class UsageError(Exception):
    """A bad command line or an unreadable/invalid file: exit code 2, one line on stderr."""


def read_connector_file(path: str) -> ConnectorRequest:
    """Parse a connector file (``.properties`` or JSON); ``UsageError`` if it is unusable."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read connector config {path}: {exc.strerror or exc}") from exc
    if path.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"invalid JSON in connector config {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise UsageError(f"connector config {path} must be a JSON object")
        return _request_from_json(path, data)
    try:
        from sparkcat.kafka.properties import parse_properties

        props = parse_properties(text)
    except ConfigError as exc:
        raise UsageError(f"invalid connector config {path}: {exc}") from exc
    return _request(path, props.get("name"), props)


def _request_from_json(path: str, data: dict[str, Any]) -> ConnectorRequest:
    if isinstance(data.get("config"), dict):
        config = {k: _string(v) for k, v in data["config"].items()}
        request = _request(path, data.get("name"), config)
        return ConnectorRequest(
            request.name, request.config, data.get("initial_state"), data.get("initial_offsets")
        )
    return _request(path, data.get("name"), {k: _string(v) for k, v in data.items()})


def _string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _request(path: str, name: Any, config: Mapping[str, str | None]) -> ConnectorRequest:
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"connector config {path} has no 'name'")
    try:
        config = check_connector_name(name.strip(), config)
    except ConnectError as exc:
        raise UsageError(f"invalid connector config {path}: {exc}") from exc
    return ConnectorRequest(name.strip(), config)


def load_worker_config(path: str) -> WorkerConfig:
    try:
        props = load_properties(path)
    except OSError as exc:
        raise UsageError(f"cannot read worker config {path}: {exc.strerror or exc}") from exc
    except ConfigError as exc:
        raise UsageError(f"invalid worker config {path}: {exc}") from exc
    try:
        return WorkerConfig(props)
    except ConfigError as exc:
        raise UsageError(f"invalid worker config {path}: {exc}") from exc


def prevalidate(worker: WorkerConfig, requests: list[tuple[str, ConnectorRequest]]) -> None:
    """Validate every connector config before anything starts (``UsageError`` if invalid)."""
    registry = default_registry(worker.plugin_path())
    seen: set[str] = set()
    for path, request in requests:
        if request.name in seen:
            raise UsageError(f"connector config {path}: connector {request.name} is defined twice")
        seen.add(request.name)
        try:
            ensure_valid(validate_connector_config(request.config, registry, worker))
        except ConnectError as exc:
            # Kafka's text: a header line ending in ':', one line per error, a pointer to the
            # validate endpoint (dropped: the command line has no endpoint to point at).
            header, *errors = str(exc).splitlines()[:-1] or [str(exc)]
            reason = " ".join([header, "; ".join(errors)]) if errors else header
            raise UsageError(f"invalid connector config {path}: {reason}") from exc


def parse_standalone_args(args: Sequence[str]) -> tuple[WorkerConfig, list[ConnectorRequest]]:
    if not args or args[0].startswith("-"):
        raise UsageError(USAGE)
    worker = load_worker_config(args[0])
    requests = [(path, read_connector_file(path)) for path in args[1:]]
    prevalidate(worker, requests)
    return worker, [request for _, request in requests]


def main(argv: Sequence[str] | None = None) -> int:
    """``sparkcat standalone ...`` / ``sparkcat --version``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"sparkcat {sparkcat.__version__}")
        return 0
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if args[:1] in (["connectors"], ["plugins"]):
        from sparkcat.cli_manage import manage_main

        return manage_main(args)
    if args[:1] == ["jvm-archive"]:
        from sparkcat.cli_jvm_archive import jvm_archive_main

        return jvm_archive_main(args[1:])
    if args[:1] == ["mirror-maker"]:
        from sparkcat.mirror_maker import run_mirror_maker

        return run_mirror_maker(args[1:])
    if args[:1] == ["distributed"]:
        from sparkcat.cli_distributed import run_distributed

        return run_distributed(args[1:])
    if not args or args[0] != "standalone":
        command = f"unknown command '{args[0]}'; " if args else ""
        print(f"sparkcat: {command}{USAGE}", file=sys.stderr)
        return 2
    return run_standalone(args[1:])


def standalone_main(argv: Sequence[str] | None = None) -> int:
    """``connect-standalone WORKER.properties [CONNECTOR ...]``."""
    return run_standalone(list(sys.argv[1:] if argv is None else argv))


def run_standalone(args: Sequence[str]) -> int:
    try:
        worker, requests = parse_standalone_args(args)
    except UsageError as exc:
        print(f"sparkcat: {exc}", file=sys.stderr)
        return 2
    prepare_process()
    return ConnectStandalone(worker).run(requests)


if __name__ == "__main__":
    sys.exit(main())
