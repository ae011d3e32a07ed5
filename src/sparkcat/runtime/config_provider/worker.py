"""Kafka's ``WorkerConfigTransformer``: the worker's providers, and resolution at the last moment.

The worker config declares providers (KIP-297)::

    config.providers=file,env
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.file.param.allowed.paths=/etc/connect
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.file.ttl=60000      # sparkcat: re-read every minute (see below)

Configs are stored and shipped *unresolved* (``${file:/etc/connect/db.properties:password}``)
and resolved by :func:`resolve` in the process that is about to use them: the worker for a
``Connector.start`` and for its own Kafka clients, a Spark executor for a task lease and
its clients. So the secret is never in the config topic, the offsets file, a REST answer, a
Spark plan or a log line. Provider instances are built once per process and per provider
configuration (any plugin the registry resolves as a ``config_provider``).

``config.providers.<alias>.ttl`` (ms, sparkcat's addition; Kafka leaves TTLs to the
provider) gives the values of a provider without a TTL of its own one; with
``config.action.reload=restart`` (the connector's default) :class:`WorkerConfigTransformer`
re-resolves a connector's config when a TTL expires and restarts the connector when a value
changed.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from sparkcat.api.config_provider import ConfigProvider
from sparkcat.api.errors import ConfigError
from sparkcat.runtime.config_provider.transformer import ConfigTransformer, TransformResult

log = logging.getLogger(__name__)

CONFIG_PROVIDERS_CONFIG = "config.providers"
CONFIG_RELOAD_ACTION_CONFIG = "config.action.reload"
_PREFIX = CONFIG_PROVIDERS_CONFIG + "."


def _provider_settings(worker: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The worker keys that define providers (plus ``plugin.path``), as a hashable key."""
    items = [
        (k, str(v))
        for k, v in worker.items()
        if k == CONFIG_PROVIDERS_CONFIG or k.startswith(_PREFIX) or k == "plugin.path"
    ]
    return tuple(sorted(items))


@functools.lru_cache(maxsize=16)
def _providers(
    settings: tuple[tuple[str, str], ...],
) -> tuple[dict[str, ConfigProvider], dict[str, int]]:
    from sparkcat.runtime.isolation.plugins import default_registry

    values = dict(settings)
    aliases = [a.strip() for a in values.get(CONFIG_PROVIDERS_CONFIG, "").split(",") if a.strip()]
    paths = tuple(p.strip() for p in values.get("plugin.path", "").split(",") if p.strip())
    providers: dict[str, ConfigProvider] = {}
    ttls: dict[str, int] = {}
    for alias in aliases:
        class_key = f"{_PREFIX}{alias}.class"
        class_name = values.get(class_key)
        if not class_name:
            raise ConfigError(class_key, None, "Missing required configuration")
        cls = default_registry(paths).resolve(class_name.strip(), "config_provider")
        param_prefix = f"{_PREFIX}{alias}.param."
        params = {
            k[len(param_prefix) :]: v for k, v in values.items() if k.startswith(param_prefix)
        }
        provider = cls()
        provider.configure(params)
        providers[alias] = provider
        ttl = values.get(f"{_PREFIX}{alias}.ttl")
        if ttl:
            ttls[alias] = int(ttl)
    return providers, ttls


def transform(worker: Mapping[str, Any], configs: Mapping[str, str]) -> TransformResult:
    """``configs`` with every variable of the worker's providers resolved, and the TTLs."""
    if not any(isinstance(v, str) and "${" in v for v in configs.values()):
        return TransformResult(dict(configs))
    settings = _provider_settings(worker)
    providers, default_ttls = _providers(settings) if settings else ({}, {})
    result = ConfigTransformer(providers).transform(configs)
    if default_ttls:
        ttls = dict(result.ttls)
        for value in configs.values():
            for alias, ttl in default_ttls.items():
                if isinstance(value, str) and "${" + alias + ":" in value:
                    ttls.setdefault(alias, ttl)
        result = TransformResult(result.data, ttls)
    return result


def resolve(worker: Mapping[str, Any], configs: Mapping[str, str]) -> dict[str, str]:
    """``configs`` resolved with the providers ``worker`` declares (a copy; no-op without
    variables). Call it where the values are used, never before storing or shipping them."""
    return transform(worker, configs).data


def resolve_worker(worker: Mapping[str, Any]) -> dict[str, str]:
    """The worker config itself resolved (KIP-421), provider definitions left as they are."""
    plain = {k: str(v) for k, v in worker.items() if v is not None}
    defs = {k: v for k, v in plain.items() if k == CONFIG_PROVIDERS_CONFIG or k.startswith(_PREFIX)}
    rest = {k: v for k, v in plain.items() if k not in defs}
    return {**resolve(worker, rest), **defs}


def scrubber(worker: Mapping[str, Any], configs: Mapping[str, str]) -> Callable[[str], str]:
    """A function that puts the ``${...}`` form back into a text (an error trace, a log
    line) wherever the resolved value of one of ``configs``' variables appears in it: for
    messages of code that saw resolved values (a Spark data source failing with its options).
    Values shorter than 4 characters are left alone (they would mangle ordinary text)."""
    from sparkcat.runtime.config_provider.transformer import VARIABLE_PATTERN

    variables = {
        m.group(0)
        for v in configs.values()
        if isinstance(v, str) and "${" in v
        for m in VARIABLE_PATTERN.finditer(v)
    }
    if not variables:
        return lambda text: text
    resolved = resolve(worker, {v: v for v in variables})
    pairs = sorted(((value, var) for var, value in resolved.items()
                    if value != var and len(value) >= 4), key=lambda p: -len(p[0]))  # fmt: skip

    def scrub(text: str) -> str:
        for value, var in pairs:
            text = text.replace(value, var)
        return text

    return scrub


class WorkerConfigTransformer:
    """Resolves connector configs for the herder and schedules reloads on TTL expiry.

    ``restart(name)`` is called (on a timer thread) when a connector's resolved config
    changed after a TTL expired and its ``config.action.reload`` is ``restart``.
    """

    def __init__(self, worker: Mapping[str, Any], restart: Callable[[str], None]) -> None:
        self._worker = dict(worker)
        settings = _provider_settings(self._worker)
        if settings:
            _providers(settings)  # as Kafka's Worker: a bad provider fails the worker's start
        self._restart = restart
        self._lock = threading.Lock()
        self._timers: dict[str, threading.Timer] = {}

    def transform(self, name: str, configs: Mapping[str, str]) -> dict[str, str]:
        result = transform(self._worker, configs)
        action = (configs.get(CONFIG_RELOAD_ACTION_CONFIG) or "restart").strip().lower()
        if action == "restart" and result.ttls:
            self._schedule(name, dict(configs), result.data, min(result.ttls.values()))
        return result.data

    def _schedule(
        self,
        name: str,
        raw: dict[str, str],
        resolved: dict[str, str],
        ttl: int,
        again: bool = False,
    ) -> None:
        level = logging.DEBUG if again else logging.INFO
        log.log(level, "Scheduling a reload of connector %s's config in %d ms", name, ttl)
        timer = threading.Timer(ttl / 1000.0, self._expired, (name, raw, resolved, ttl))
        timer.daemon = True
        with self._lock:
            previous = self._timers.pop(name, None)
            if previous is not None:
                previous.cancel()
            self._timers[name] = timer
        timer.start()

    def _expired(self, name: str, raw: dict[str, str], resolved: dict[str, str], ttl: int) -> None:
        with self._lock:
            if self._timers.get(name) is not threading.current_thread():
                return  # cancelled or replaced meanwhile
            del self._timers[name]
        try:
            fresh = transform(self._worker, raw).data
        except Exception:
            log.exception("Could not re-resolve the config of connector %s", name)
            fresh = resolved
        if fresh != resolved:
            log.info("Config values of connector %s changed; restarting it", name)
            self._restart(name)  # the restart resolves (and schedules) again
        else:
            self._schedule(name, raw, resolved, ttl, again=True)

    def cancel(self, name: str) -> None:
        with self._lock:
            timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        with self._lock:
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()


__all__ = [
    "CONFIG_PROVIDERS_CONFIG",
    "WorkerConfigTransformer",
    "resolve",
    "resolve_worker",
    "scrubber",
    "transform",
]
