"""``sparkcat connectors ...`` / ``sparkcat plugins list``: manage a running worker over REST.

::

    sparkcat connectors list | get NAME | status NAME | create FILE | delete NAME
    sparkcat connectors status [NAME] --watch [--interval SECONDS]
    sparkcat connectors pause NAME | resume NAME | stop NAME
    sparkcat connectors restart NAME [--include-tasks] [--only-failed]
    sparkcat connectors offsets NAME [--reset | --alter FILE]
    sparkcat plugins list [--all]

Every command takes ``--url`` (default ``http://localhost:8083``) and ``--json`` (print the
REST answer as JSON instead of a table). ``create`` reads the files the standalone worker
accepts: ``.properties``, a flat JSON config, or a create request ``{"name", "config",
"initial_state", "initial_offsets"}``. ``offsets --alter`` reads ``{"offsets": [...]}``.

``status --watch`` redraws a table of every connector (or of NAME's tasks) with states,
records per second and sink lag, from the worker's metrics, until interrupted (Ctrl-C).

Exit codes: 0 on success; 2 on any error (bad arguments, an unreadable file, an error
answer, a worker that cannot be reached) with one line ``sparkcat: <reason>`` on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO
from urllib.parse import quote

import httpx

DEFAULT_URL = "http://localhost:8083"
TIMEOUT_S = 100.0  # above Kafka's 90 s request timeout


class ManageError(Exception):
    """One line for stderr; exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ManageError(f"{message} (see '{self.prog} --help')")


class Client:
    """A thin REST client: JSON in, JSON out, Kafka's error body turned into ManageError."""

    def __init__(
        self,
        url: str,
        transport: httpx.BaseTransport | None = None,
        user: str | None = None,
        cacert: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        auth = None
        if user is not None:
            name, sep, password = user.partition(":")
            if not sep:
                raise ManageError("--user takes USER:PASSWORD")
            auth = httpx.BasicAuth(name, password)
        verify: Any = True
        if cacert is not None:
            import ssl

            try:
                verify = ssl.create_default_context(cafile=cacert)
            except (OSError, ssl.SSLError) as exc:
                raise ManageError(f"cannot read --cacert {cacert}: {exc}") from exc
        self._http = httpx.Client(
            base_url=self.url, timeout=TIMEOUT_S, transport=transport, auth=auth, verify=verify
        )

    def close(self) -> None:
        self._http.close()

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        try:
            response = self._http.request(
                method, path, json=body, params={k: v for k, v in params.items() if v is not None}
            )
        except httpx.HTTPError as exc:
            raise ManageError(f"cannot reach the worker at {self.url}: {exc}") from exc
        if response.status_code >= 400:
            raise ManageError(_error_text(response))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise ManageError(f"the worker answered {response.status_code} without JSON") from exc


def _error_text(response: httpx.Response) -> str:
    try:
        message = response.json().get("message")
    except (ValueError, AttributeError):
        message = None
    text = message or response.text.strip() or response.reason_phrase
    # Kafka's messages can span lines (validation errors): keep them on one.
    return f"{response.status_code}: " + "; ".join(line for line in text.splitlines() if line)


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(p, safe="") for p in parts)


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """Left-aligned columns separated by two spaces."""
    cells = [[str(c) for c in header]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in cells)  # fmt: skip


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _first_line(trace: str | None) -> str:
    lines = [line for line in (trace or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


# -- renderers (tables) ----------------------------------------------------------------------
def _render_list(data: dict[str, Any]) -> str:
    rows = []
    for name, entry in sorted(data.items()):
        status = entry.get("status") or {}
        info = entry.get("info") or {}
        tasks = status.get("tasks") or []
        running = sum(1 for t in tasks if t.get("state") == "RUNNING")
        rows.append([name, info.get("type", status.get("type", "")),
                     (status.get("connector") or {}).get("state", "UNKNOWN"),
                     f"{running}/{len(tasks)}"])  # fmt: skip
    return table(rows, ["NAME", "TYPE", "STATE", "TASKS RUNNING"]) if rows else "No connectors."


def _render_info(info: dict[str, Any]) -> str:
    head = f"{info['name']} ({info['type']}), tasks: {len(info.get('tasks', []))}"
    config = table(sorted(info.get("config", {}).items()), ["KEY", "VALUE"])
    status = info.get("offsets_status")
    return "\n".join([head, config] + ([status] if status else []))


def _render_status(status: dict[str, Any]) -> str:
    connector = status["connector"]
    head = f"{status['name']} ({status.get('type', '')}): {connector['state']} on " \
           f"{connector.get('worker_id', '')}"  # fmt: skip
    lines = [head]
    if connector.get("trace"):
        lines.append(f"  {_first_line(connector['trace'])}")
    tasks = status.get("tasks") or []
    if tasks:
        rows = [[t["id"], t["state"], t.get("worker_id", ""), _first_line(t.get("trace"))]
                for t in tasks]  # fmt: skip
        lines.append(table(rows, ["TASK", "STATE", "WORKER", "ERROR"]))
    return "\n".join(lines)


def _render_offsets(data: dict[str, Any]) -> str:
    rows = [[_compact(o.get("partition")), _compact(o.get("offset"))] for o in data["offsets"]]
    return table(rows, ["PARTITION", "OFFSET"]) if rows else "No offsets."


def _render_plugins(plugins: list[dict[str, Any]]) -> str:
    rows = [[p["class"], p["type"], p.get("version", "")] for p in plugins]
    return table(rows, ["CLASS", "TYPE", "VERSION"])


# -- commands --------------------------------------------------------------------------------
Result = tuple[Any, Callable[[Any], str] | str]


def _read_json(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ManageError(f"invalid JSON in {path}: {exc}") from exc


def _create_body(path: str) -> dict[str, Any]:
    """The ``POST /connectors`` body of a connector file (the worker validates it)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ManageError(f"cannot read connector config {path}: {exc.strerror or exc}") from exc
    if path.endswith(".json") or text.lstrip().startswith("{"):
        data = _read_json(path)
        if not isinstance(data, dict):
            raise ManageError(f"connector config {path} must be a JSON object")
        if isinstance(data.get("config"), dict):
            return data  # a create request: name, config, initial_state, initial_offsets
        return {"name": data.get("name"), "config": data}
    from sparkcat.api.errors import ConfigError
    from sparkcat.kafka.properties import parse_properties

    try:
        props = parse_properties(text)
    except ConfigError as exc:
        raise ManageError(f"invalid connector config {path}: {exc}") from exc
    return {"name": props.get("name"), "config": props}


def run_command(client: Client, args: argparse.Namespace) -> Result:
    """Make the REST call(s) of ``args``; the JSON answer and how to render it."""
    name: str = getattr(args, "name", "")
    if args.group == "plugins":
        only = "false" if args.all else None
        return client.call("GET", "/connector-plugins", connectorsOnly=only), _render_plugins
    command = args.command
    if command == "list":
        return client.call("GET", "/connectors", expand=["status", "info"]), _render_list
    if command == "get":
        return client.call("GET", _path("connectors", name)), _render_info
    if command == "status":
        if not name:
            raise ManageError("status needs a connector name (or --watch for all)")
        return client.call("GET", _path("connectors", name, "status")), _render_status
    if command == "create":
        return client.call("POST", "/connectors", _create_body(args.file)), _render_info
    if command == "delete":
        return client.call("DELETE", _path("connectors", name)), f"Deleted connector {name}."
    if command in ("pause", "resume", "stop"):
        client.call("PUT", _path("connectors", name, command))
        done = {"pause": "Paused", "resume": "Resumed", "stop": "Stopped"}[command]
        return None, f"{done} connector {name}."
    if command == "restart":
        plan = client.call("POST", _path("connectors", name, "restart"),
                           includeTasks=str(args.include_tasks).lower(),
                           onlyFailed=str(args.only_failed).lower())  # fmt: skip
        return plan, _render_status if plan else f"Restarted connector {name}."
    return _offsets(client, args)


def _offsets(client: Client, args: argparse.Namespace) -> Result:
    path = _path("connectors", args.name, "offsets")
    if args.reset:
        answer = client.call("DELETE", path)
        return answer, answer["message"]
    if args.alter:
        body = _read_json(args.alter)
        answer = client.call("PATCH", path, body if isinstance(body, dict) else {"offsets": body})
        return answer, answer["message"]
    return client.call("GET", path), _render_offsets


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--url", default=argparse.SUPPRESS, help=f"the worker's REST URL (default {DEFAULT_URL})"
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the REST answer as JSON")  # fmt: skip
    common.add_argument("--user", default=argparse.SUPPRESS, metavar="USER:PASSWORD",
                        help="HTTP Basic credentials (BasicAuthSecurityRestExtension)")  # fmt: skip
    common.add_argument("--cacert", default=argparse.SUPPRESS, metavar="FILE",
                        help="PEM CA certificate(s) to trust for an https:// --url")  # fmt: skip
    parser = _Parser(prog="sparkcat", parents=[common])
    groups = parser.add_subparsers(dest="group", required=True, parser_class=_Parser)
    connectors = groups.add_parser("connectors", parents=[common], help="manage connectors")
    commands = connectors.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", parents=[common], help="connectors and their states")
    for command in ("get", "delete", "pause", "resume", "stop"):
        commands.add_parser(command, parents=[common]).add_argument("name")
    status = commands.add_parser("status", parents=[common])
    status.add_argument("name", nargs="?", default="")
    status.add_argument("--watch", action="store_true", help="redraw states and rates")
    status.add_argument("--interval", type=float, default=2.0, help="seconds between redraws")
    status.add_argument("--iterations", type=int, default=0, help=argparse.SUPPRESS)
    commands.add_parser("create", parents=[common]).add_argument("file")
    restart = commands.add_parser("restart", parents=[common])
    restart.add_argument("name")
    restart.add_argument("--include-tasks", action="store_true")
    restart.add_argument("--only-failed", action="store_true")
    offsets = commands.add_parser("offsets", parents=[common])
    offsets.add_argument("name")
    change = offsets.add_mutually_exclusive_group()
    change.add_argument("--reset", action="store_true", help="reset every offset")
    change.add_argument("--alter", metavar="FILE", help='JSON {"offsets": [...]} to apply')
    plugins = groups.add_parser("plugins", parents=[common], help="installed plugins")
    plugin_commands = plugins.add_subparsers(dest="command", required=True, parser_class=_Parser)
    plugin_list = plugin_commands.add_parser("list", parents=[common])
    plugin_list.add_argument("--all", action="store_true", help="not only connectors")
    return parser


def manage_main(argv: Sequence[str], transport: httpx.BaseTransport | None = None) -> int:
    """Run one management command; the process exit code."""
    try:
        args = build_parser().parse_args(list(argv))
        client = Client(
            getattr(args, "url", DEFAULT_URL),
            transport,
            getattr(args, "user", None),
            getattr(args, "cacert", None),
        )
        try:
            if getattr(args, "watch", False):
                return watch(client, args.name, args.interval, args.iterations, sys.stdout)
            answer, render = run_command(client, args)
        finally:
            client.close()
    except ManageError as exc:
        print(f"sparkcat: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        if answer is not None:
            print(json.dumps(answer, indent=2))
    else:
        print(render if isinstance(render, str) else render(answer))
    return 0


# -- status --watch ----------------------------------------------------------------------------
_CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear screen


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"


def watch_table(connectors: dict[str, Any], metrics: dict[str, Any], name: str = "") -> str:
    """One frame of ``status --watch``: every connector, or ``name``'s tasks."""
    numbers = metrics.get("connectors", {})
    if name:
        if name not in connectors:
            raise ManageError(f"404: Connector {name} not found")
        status = connectors[name].get("status") or {}
        tasks_metrics = numbers.get(name, {}).get("tasks", {})
        rows = []
        for task in status.get("tasks") or []:
            groups = tasks_metrics.get(str(task["id"]), {})
            source = groups.get("source-task-metrics", {})
            sink = groups.get("sink-task-metrics", {})
            rate = source.get("source-record-write-rate", sink.get("sink-record-send-rate"))
            total = source.get("source-record-write-total", sink.get("sink-record-send-total"))
            rows.append([task["id"], task["state"], task.get("worker_id", ""), _rate(rate),
                         "-" if total is None else f"{total:,.0f}",
                         _first_line(task.get("trace"))])  # fmt: skip
        state = (status.get("connector") or {}).get("state", "UNKNOWN")
        head = f"{name}: {state}"
        return head + "\n" + table(rows, ["TASK", "STATE", "WORKER", "RECORDS/S", "TOTAL",
                                          "ERROR"])  # fmt: skip
    rows = []
    for connector, entry in sorted(connectors.items()):
        status = entry.get("status") or {}
        tasks = status.get("tasks") or []
        running = sum(1 for t in tasks if t.get("state") == "RUNNING")
        figures = numbers.get(connector, {})
        lag = figures.get("lag")
        rows.append([connector, status.get("type", ""),
                     (status.get("connector") or {}).get("state", "UNKNOWN"),
                     f"{running}/{len(tasks)}", _rate(figures.get("rate")),
                     "-" if lag is None else f"{lag:,.0f}"])  # fmt: skip
    if not rows:
        return "No connectors."
    return table(rows, ["NAME", "TYPE", "STATE", "TASKS RUNNING", "RECORDS/S", "LAG"])


def watch(client: Client, name: str, interval: float, iterations: int, out: TextIO) -> int:
    """Redraw :func:`watch_table` every ``interval`` s (``iterations`` > 0: that many times)."""
    drawn = 0
    try:
        while True:
            connectors = client.call("GET", "/connectors", expand=["status", "info"])
            metrics = client.call("GET", "/ui/metrics.json")
            frame = watch_table(connectors, metrics, name)
            stamp = time.strftime("%H:%M:%S")
            out.write(f"{_CLEAR}{client.url}  {stamp}  (every {interval:g} s, Ctrl-C to quit)\n")
            out.write(frame + "\n")
            out.flush()
            drawn += 1
            if iterations and drawn >= iterations:
                return 0
            time.sleep(interval)
    except KeyboardInterrupt:
        return 0


__all__ = [
    "Client",
    "ManageError",
    "build_parser",
    "manage_main",
    "run_command",
    "table",
    "watch",
    "watch_table",
]
