"""``sparkcat.Connect``: KIP-26's embedded API, Kafka Connect inside a Python or Spark
application (docs/embedded.md).

A :class:`Connect` is one member of a Connect cluster whose group id is the application's
``app_id``: the distributed herder (the same implementation as ``sparkcat distributed``)
runs in the application's process, and the connectors' streaming queries run on the
application's SparkSession, in their own FAIR scheduler pool (``sparkcat``), beside the
application's own queries. Every process started with the same ``app_id`` (and the same
Kafka cluster) joins the group: connectors and tasks are balanced over them, and a process
that dies has its work taken over by the others.

:meth:`Connect.read_stream` and :meth:`Connect.write_stream` connect the application's own
Structured Streaming queries to Connect topics through a Connect converter.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from sparkcat.api.errors import AlreadyExistsError, ConfigError, ConnectError
from sparkcat.assembly.connect_distributed import ConnectDistributed
from sparkcat.embedded.connector import Connector
from sparkcat.embedded.errors import ConnectorConfigError
from sparkcat.embedded.leader import call_leader
from sparkcat.embedded.worker import string_map, worker_properties

log = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 120.0
_SAME_CONFIG_WAIT_S = 10.0


class Connect:
    """One member of the embedded Connect cluster ``app_id``.

    ``config``: worker keys as in ``connect-distributed.properties`` (``bootstrap.servers``,
    converters, ``plugin.path``, ``spark.*`` for a session Connect builds itself, ...);
    absent ``bootstrap.servers`` starts an embedded broker for this process. ``spark``: the
    SparkSession to run connectors on (default: the active one, else a new local one).
    ``rest=True`` serves Kafka's REST API on ``listeners`` (default ``http://:8083``).

    A context manager; :meth:`close` stops this member's connectors and tasks (the group's
    other members take them over) and is idempotent; an ``atexit`` hook closes a member the
    application left open. Raises ``ConfigError`` for an invalid worker config.
    """

    def __init__(
        self,
        app_id: str,
        config: Mapping[str, Any] | None = None,
        *,
        spark: Any = None,
        rest: bool = False,
    ) -> None:
        if not isinstance(app_id, str) or not app_id.strip():
            raise ConfigError("app_id must be a non-empty string (the Connect group id)")
        from sparkcat.runtime.distributed.config import DistributedConfig

        self.app_id = app_id
        props = worker_properties(app_id, config or {}, rest)
        worker = ConnectDistributed(DistributedConfig(props))
        self._lock = threading.Lock()
        self._closed = False
        self._queries: list[Any] = []
        session = spark
        if session is None:
            from sparkcat.engine import streams

            session = streams.active_session()
        worker.start(session, JOIN_TIMEOUT_S)
        self._worker = worker
        if session is not None:
            from sparkcat.engine import streams

            streams.check_scheduler(session)
            streams.check_python(session)
        atexit.register(self.close)

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> Connect:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the queries :meth:`write_stream` started, this member's connectors and tasks
        (gracefully: in-flight work commits its offsets), leave the group, and stop what
        Connect started (a SparkSession it built, an embedded broker). The application's
        SparkSession and its own queries are left running. Safe to call more than once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            queries, self._queries = self._queries, []
        atexit.unregister(self.close)
        for query in queries:
            try:
                query.stop()
            except Exception:
                log.exception("Could not stop a write_stream query")
        self._worker.stop()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def bootstrap_servers(self) -> str:
        """The Kafka cluster this member uses (the embedded broker's address if it runs one),
        as a ``bootstrap.servers`` value: ``host:port[,host:port...]``."""
        return ",".join(self._worker.config.get_list("bootstrap.servers"))

    @property
    def worker_id(self) -> str:
        return str(self._herder.worker_id)

    @property
    def rest_url(self) -> str:
        """Where this member's REST API listens."""
        return str(self._worker.rest.url)

    @property
    def spark(self) -> Any:
        """The SparkSession the connectors run on."""
        from sparkcat.engine import streams

        return streams.session_of(self._engine)

    @property
    def _herder(self) -> Any:
        herder = self._worker.herder
        if herder is None:
            raise ConnectError(f"Connect {self.app_id} is closed")
        return herder

    @property
    def _engine(self) -> Any:
        engine = self._worker.engine
        if engine is None:
            raise ConnectError(f"Connect {self.app_id} is closed")
        return engine

    # -- connectors -------------------------------------------------------------------------
    def add_connector(self, name: str, config: Mapping[str, Any]) -> Connector:
        """Create connector ``name`` (Kafka's ``POST /connectors``) and return its handle.

        Raises :class:`ConnectorConfigError` (nothing is created) when Kafka's validation
        finds errors; its ``messages`` are Kafka's. A connector that exists with the same
        config is not an error (every process of an application may run the same code);
        with another config it raises ``AlreadyExistsError``.
        """
        herder = self._herder
        props = string_map(config)
        props.setdefault("name", name)
        self._validate(props)
        body = {"name": name, "config": props}
        try:
            call_leader(herder, lambda: herder.create_connector(name, props),
                        "POST", "/connectors", body)  # fmt: skip
        except AlreadyExistsError:
            if not self._has_config(name, props):
                raise
        return Connector(herder, name)

    def _validate(self, props: dict[str, str]) -> None:
        from sparkcat.runtime.rest.config_infos import invalid_config_message

        try:
            infos = self._herder.validate_config(props)
        except ConnectError as exc:  # no or unknown connector.class: Kafka's 400 too
            raise ConnectorConfigError(str(exc), [str(exc)]) from exc
        if infos.error_count > 0:
            raise ConnectorConfigError(invalid_config_message(infos), infos.error_messages())

    def _has_config(self, name: str, props: dict[str, str]) -> bool:
        # The leader has it; this member's view of the config topic may be a moment behind.
        deadline = time.monotonic() + _SAME_CONFIG_WAIT_S
        while True:
            stored = self._herder.configs.snapshot().connector_config(name)
            if stored is not None or time.monotonic() >= deadline:
                return bool(stored == props)
            time.sleep(0.1)

    def connector(self, name: str) -> Connector:
        """The handle of an existing connector (``NotFoundError`` if there is none)."""
        self._herder.connector_config(name)
        return Connector(self._herder, name)

    def connectors(self) -> list[Connector]:
        """Handles of every connector of the cluster, by name."""
        herder = self._herder
        return [Connector(herder, name) for name in herder.connectors()]

    # -- the application's streams ----------------------------------------------------------
    def read_stream(
        self,
        topics: str | Sequence[str],
        converter: str | None = None,
        *,
        key_converter: str | None = None,
        converter_config: Mapping[str, Any] | None = None,
        starting_offsets: str = "earliest",
        timeout: float = 60.0,
    ) -> Any:
        """A streaming DataFrame of the records of ``topics`` decoded by a Connect converter
        (default: the worker's ``value.converter`` / ``key.converter`` with their props;
        ``converter_config`` configures the given ones).

        Struct values become typed columns from their Connect schema (learnt from the first
        record, waited for up to ``timeout`` seconds); other values one ``value`` column.
        Beside them: ``key``, ``topic``, ``partition``, ``offset``, ``timestamp`` and
        ``headers`` (``array<struct<key:string,value:binary>>``).
        ``starting_offsets``: ``earliest`` or ``latest``.
        """
        from sparkcat.engine import streams

        names = [topics] if isinstance(topics, str) else list(topics)
        settings = streams.StreamSettings(
            self._worker.config.strings(), converter, key_converter,
            dict(converter_config or {}),
        )  # fmt: skip
        return streams.read_stream(self.spark, names, settings, starting_offsets, timeout)

    def write_stream(
        self,
        df: Any,
        topic: str,
        converter: str | None = None,
        *,
        key_converter: str | None = None,
        converter_config: Mapping[str, Any] | None = None,
        checkpoint_location: str | None = None,
        trigger: Mapping[str, Any] | None = None,
    ) -> Any:
        """Start a streaming query writing ``df`` to ``topic`` through a Connect converter;
        returns the ``StreamingQuery`` (stopped by :meth:`close`).

        Columns ``key``, ``partition``, ``timestamp`` and ``headers`` (as :meth:`read_stream`
        gives them) are used as such; a column ``value`` is the value; otherwise the other
        columns form a Struct value whose Connect schema follows the DataFrame's types.
        ``trigger``: keyword arguments of ``DataStreamWriter.trigger``.
        """
        from sparkcat.engine import streams

        settings = streams.StreamSettings(
            self._worker.config.strings(), converter, key_converter,
            dict(converter_config or {}),
        )  # fmt: skip
        query = streams.write_stream(df, topic, settings, checkpoint_location, trigger)
        with self._lock:
            if self._closed:
                query.stop()
                raise ConnectError(f"Connect {self.app_id} is closed")
            self._queries.append(query)
        return query


__all__ = ["Connect"]
