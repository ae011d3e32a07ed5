"""Log levels over the REST API (KIP-495 / KIP-976), on Python's :mod:`logging`.

Kafka's log4j level names are used both ways: ``TRACE`` (Python level 5), ``DEBUG``,
``INFO``, ``WARN`` (``WARNING``), ``ERROR``, ``FATAL`` (``CRITICAL``), plus log4j's ``ALL``
(1) and ``OFF`` (above ``CRITICAL``). The root logger is ``root`` (case-insensitive). As in
Kafka: listing shows the loggers with an explicitly set level plus ``root``; setting a level
applies it to the namespace's logger (created if missing) and every existing logger whose
name starts with the namespace; ``last_modified`` is the epoch ms of the last change made
through this class (setting the level a logger already has changes nothing).
"""

from __future__ import annotations

import logging
import threading
import time

from sparkcat.api.errors import NotFoundError
from sparkcat.runtime.rest.entities import LoggerLevel
from sparkcat.runtime.rest.errors import BadRequestError

ROOT = "root"
TRACE = 5
OFF = logging.CRITICAL + 10
_TO_PYTHON = {
    "ALL": 1,
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": OFF,
}
_TO_KAFKA = {level: name for name, level in _TO_PYTHON.items()}


def kafka_level_name(level: int) -> str:
    """The log4j name of a Python level (Python's own name for levels log4j lacks)."""
    return _TO_KAFKA.get(level) or logging.getLevelName(level)


def parse_level(text: str | None) -> int:
    """A Python level from a log4j name (case-insensitive), with Kafka's REST errors."""
    if text is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    level = _TO_PYTHON.get(text.upper())
    if level is None:
        raise NotFoundError(f"invalid log level '{text}'.")
    return level


class Loggers:
    """Reads and sets logger levels; remembers when each was last changed. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_modified: dict[str, int] = {}

    @staticmethod
    def _existing() -> dict[str, logging.Logger]:
        loggers = logging.Logger.manager.loggerDict
        return {n: lg for n, lg in list(loggers.items()) if isinstance(lg, logging.Logger)}

    def _level_of(self, name: str, logger: logging.Logger) -> LoggerLevel:
        level = logger.level or logger.getEffectiveLevel()
        return LoggerLevel(kafka_level_name(level), self._last_modified.get(name))

    def level(self, name: str) -> LoggerLevel:
        """The logger's level (its effective level if not set); 404 if it does not exist."""
        with self._lock:
            if name.lower() == ROOT:
                return self._level_of(ROOT, logging.getLogger())
            logger = self._existing().get(name)
            if logger is None:
                raise NotFoundError(f"Logger {name} not found.")
            return self._level_of(name, logger)

    def all_levels(self) -> dict[str, LoggerLevel]:
        """Loggers with an explicitly set level, and ``root``, sorted by name."""
        with self._lock:
            found = {n: self._level_of(n, lg) for n, lg in self._existing().items() if lg.level}
            found[ROOT] = self._level_of(ROOT, logging.getLogger())
            return dict(sorted(found.items()))

    def set_level(self, namespace: str, level_name: str | None) -> list[str]:
        """Set the level of ``namespace`` and its descendants; the affected names, sorted."""
        level = parse_level(level_name)
        with self._lock:
            if namespace.lower() == ROOT:
                targets = {**self._existing(), ROOT: logging.getLogger()}
            else:
                targets = {n: lg for n, lg in self._existing().items() if n.startswith(namespace)}
                if namespace not in targets:
                    targets[namespace] = logging.getLogger(namespace)
            now = int(time.time() * 1000)
            for name, logger in targets.items():
                if (logger.level or logger.getEffectiveLevel()) != level:
                    logger.setLevel(level)
                    self._last_modified[name] = now
            return sorted(targets)


logging.addLevelName(TRACE, "TRACE")

__all__ = ["ROOT", "Loggers", "kafka_level_name", "parse_level"]
