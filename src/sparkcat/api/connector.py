"""What every connector and task is: :class:`Connector`, :class:`Task`, their context.

Counterparts of Kafka's ``org.apache.kafka.connect.connector.{Connector, ConnectorContext,
Task}`` and ``common.config.Config``. Users subclass
:class:`~sparkcat.api.source.SourceConnector` or :class:`~sparkcat.api.sink.SinkConnector`
(and their tasks), never these bases directly.

Where things run: a ``Connector`` instance lives in the worker's main process (the Spark
driver) for as long as the connector runs; it is never pickled. Tasks are created on Spark
executors (Python workers) from the task configs the connector returned: those configs are
plain ``dict[str, str]`` and travel pickled; task instances and their clients never do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparkcat.api.config import ConfigDef, ConfigValue


class Config:
    """The result of :meth:`Connector.validate`: one ``ConfigValue`` per checked key.

    Kafka's ``common.config.Config``: :attr:`config_values`; also iterable and sized.
    """

    __slots__ = ("_values",)

    def __init__(self, config_values: Sequence[ConfigValue]) -> None:
        self._values: tuple[ConfigValue, ...] = tuple(config_values)

    @property
    def config_values(self) -> list[ConfigValue]:
        return list(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[ConfigValue]:
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._values == other._values
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Config(config_values={list(self._values)!r})"


class ConnectorContext(ABC):
    """Lets a running :class:`Connector` talk to the framework.

    Implemented by the runtime, handed to :meth:`Connector.initialize`. Its methods may be
    called from any thread of the worker's main process (e.g. a connector's own monitoring
    thread).
    """

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the framework to call :meth:`Connector.task_configs` again and restart the
        tasks with the new configs (e.g. because the set of tables to copy changed).

        Raises :class:`~sparkcat.api.errors.ConnectError` once the connector was stopped.
        """

    @abstractmethod
    def raise_error(self, exc: BaseException) -> None:
        """Report an unrecoverable error: the connector's status becomes FAILED with the trace
        of ``exc``. Meant for errors found outside the framework's calls (background threads);
        errors inside ``start``/``task_configs`` are simply raised."""


class Connector(ABC):
    """A connector: configured by the user, it splits the job into task configs.

    Lifecycle, driven by the runtime in the worker's main process: instantiate (no
    arguments) → :meth:`initialize` → :meth:`start` → :meth:`task_configs` (on start, after
    :meth:`ConnectorContext.request_task_reconfiguration`, after a config update) → …
    → :meth:`stop`. Pausing calls :meth:`stop` and resuming :meth:`start` again on the same
    instance. :meth:`version`, :meth:`config`, :meth:`validate` and the offsets hooks may be
    called on a separate instance that was never initialized nor started.
    """

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        """Called once, before :meth:`start`; keeps ``context`` as :attr:`context`."""
        self.context = context

    @abstractmethod
    def version(self) -> str:
        """The connector's version string, shown by ``GET /connector-plugins``."""

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the user's connector config (all keys, framework ones included, after
        config-provider substitution). Should return promptly; long work belongs in tasks or
        a background thread."""

    def reconfigure(self, props: dict[str, str]) -> None:
        """Apply a new config: by default :meth:`stop` then :meth:`start`."""
        self.stop()
        self.start(props)

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The :class:`Task` subclass the tasks run. It is imported by class path on the
        executors, so it must be importable there (a module-level class)."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` configs, one per task to run (index = task id).

        Each config is a ``dict[str, str]`` that is stored, shown by the REST API and pickled
        to the executors, so it holds only strings. Called after :meth:`start`.
        """

    @abstractmethod
    def stop(self) -> None:
        """Release what :meth:`start` acquired. Called on delete, pause, reconfiguration and
        worker shutdown; it may be followed by another :meth:`start` on this instance."""

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        """Check a proposed config without starting anything (``PUT
        /connector-plugins/{name}/config/validate`` and create/update).

        The default validates against :meth:`config`; override to add cross-key checks (add
        error messages to the returned values rather than raising).
        """
        return Config(self.config().validate(dict(connector_configs)))

    @abstractmethod
    def config(self) -> ConfigDef:
        """The connector's own config keys; the framework adds its common keys."""


class Task(ABC):
    """A unit of copying work, configured by one entry of :meth:`Connector.task_configs`.

    Task instances are created on a Spark executor for one lease (a bounded run of the task
    between two offset commits) and are finished inside it: they must not expect to see the
    same instance, process or open connections in the next lease.
    Task instances are never pickled; create clients in ``start``.
    """

    @abstractmethod
    def version(self) -> str:
        """The task's version string (usually the connector's)."""

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the task config; runs on the executor at the beginning of a lease."""

    @abstractmethod
    def stop(self) -> None:
        """Signal the task to stop; may be called more than once."""


__all__ = ["Config", "Connector", "ConnectorContext", "Task"]
