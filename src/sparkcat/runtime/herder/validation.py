"""The connector-config validation pipeline, used by create/update and by
``PUT /connector-plugins/{name}/config/validate``.

Steps, as Kafka's ``AbstractHerder.validateConnectorConfig``:

2. ``connector.class`` is required (400 ``Connector config {...} contains no connector
   type``); the class is resolved by the plugin registry (unknown → ``ConnectError``, 500);
3. the Source/Sink framework ConfigDef, enriched with each transform's and predicate's keys
   (:func:`sparkcat.runtime.transformation_chain.enrich_config_def`), validates every key;
4. the sink rules (§4.4);
5. a key given as ``None`` (JSON ``null``) gets ``Null value can not be supplied as the
   configuration value.``;
6. ``Connector.config()`` and ``Connector.validate()`` must not return ``None`` (400); their
   keys and values join the result;
8. client overrides (``producer.override.*`` for sources and sinks with a DLQ,
   ``consumer.override.*`` for sinks, ``admin.override.*`` for sources with topic creation
   and sinks with a DLQ) are reported with the definition Kafka's client config gives their
   key (:mod:`sparkcat.runtime.client_configs`; passwords ``[hidden]``) and checked against
   ``connector.client.config.override.policy``;
9. on a distributed worker, a source connector's exactly-once preflight (KIP-618):
   ``exactly.once.support=required`` asks ``SourceConnector.exactly_once_support()`` and
   ``transaction.boundary=connector`` asks ``can_define_transaction_boundaries()``; errors
   carry Kafka's texts (:func:`validate_exactly_once`).

Not done yet: step 1 (config-provider substitution) and step 7 (converter-specific key
validation of ``key.converter.*`` etc.). sparkcat adds one check: ``max.batch.ms`` /
``max.batch.records`` given in a connector config must be positive longs (reported as entries
without a definition, so the defined keys stay exactly Kafka's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sparkcat.api.config import ConfigKey, ConfigType, ConfigValue
from sparkcat.api.config._types import parse_type, public_module, render
from sparkcat.api.connector import Connector
from sparkcat.api.errors import ConfigError
from sparkcat.api.sink import SinkConnector
from sparkcat.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
)
from sparkcat.runtime.client_configs import ClientType, client_config_def
from sparkcat.runtime.config_provider import keys_with_variables, resolve
from sparkcat.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    NAME_CONFIG,
    connector_kind_error,
    has_dlq_topic,
    sink_config_def,
    source_config_def,
    uses_topic_creation,
    validate_sink_rules,
)
from sparkcat.runtime.engine_api import ConnectorKind
from sparkcat.runtime.isolation.plugins import PluginRegistry
from sparkcat.runtime.rest.config_infos import (
    generate_result,
    invalid_config_message,
    merge_results,
    prefixed_result,
)
from sparkcat.runtime.rest.entities import ConfigInfos
from sparkcat.runtime.rest.errors import BadRequestError
from sparkcat.runtime.worker_config import (
    CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
    MAX_BATCH_MS_CONFIG,
    MAX_BATCH_RECORDS_CONFIG,
    WorkerConfig,
    override_policy_name,
)

_PRINCIPAL_ALLOWED = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})
NULL_VALUE_MESSAGE = "Null value can not be supplied as the configuration value."


@dataclass(frozen=True, slots=True)
class Validation:
    """What validating a connector config found."""

    infos: ConfigInfos
    connector_class: type[Connector]
    kind: ConnectorKind


def connector_kind(cls: type) -> ConnectorKind:
    """``source`` or ``sink``; ``ConnectError`` for any other class."""
    if issubclass(cls, SourceConnector):
        return "source"
    if issubclass(cls, SinkConnector):
        return "sink"
    raise connector_kind_error()


def validate_connector_config(
    props: Mapping[str, str | None], registry: PluginRegistry, worker: WorkerConfig
) -> Validation:
    """Run the pipeline over ``props``; never raises for invalid values (they are counted in
    ``infos.error_count``), only for the request-level failures named in the module docs."""
    raw = props
    props = _resolved(props, worker)
    connector_type = props.get(CONNECTOR_CLASS_CONFIG)
    if connector_type is None:
        raise BadRequestError(f"Connector config {render(dict(props))} contains no connector type")
    cls = registry.resolve(connector_type, "connector")
    kind = connector_kind(cls)
    connector = cls()
    from sparkcat.runtime.transformation_chain import enrich_config_def

    base = source_config_def(registry) if kind == "source" else sink_config_def(registry)
    enriched = enrich_config_def(base, dict(props), registry.resolve)
    validated = enriched.validate_all(props)
    if kind == "sink":
        validate_sink_rules(props, validated)
    _validate_lease_bounds(props, validated)

    class_name = f"{public_module(cls.__module__)}.{cls.__qualname__}"
    own_def = connector.config()
    if own_def is None:
        raise BadRequestError(f"{class_name}.config() must return a ConfigDef that is not null.")
    own = connector.validate({k: v for k, v in props.items() if v is not None})
    if own is None:
        raise BadRequestError(f"{class_name}.validate() must return a Config that is not null.")
    keys = dict(enriched.config_keys())
    keys.update(own_def.config_keys())
    groups = list(enriched.groups())
    groups.extend(g for g in own_def.groups() if g not in groups)
    if kind == "source" and _is_distributed(worker):
        validate_exactly_once(props, validated, connector, _eos_enabled(worker))
    values = [*validated.values(), *own.config_values]
    _reject_nulls(props, values)
    infos = generate_result(connector_type, keys, values, groups)

    policy = override_policy_name(worker.get_string(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG))
    uses_dlq = kind == "sink" and has_dlq_topic(props)
    producer = admin = consumer = None
    if kind == "source" or uses_dlq:
        producer = _client_overrides(props, "producer", policy)
    if (kind == "source" and uses_topic_creation(props)) or uses_dlq:
        admin = _client_overrides(props, "admin", policy)
    if kind == "sink":
        consumer = _client_overrides(props, "consumer", policy)
    merged = merge_results(connector_type, infos, producer, consumer, admin)
    return Validation(_with_variables(merged, raw), cls, kind)


def _resolved(props: Mapping[str, str | None], worker: WorkerConfig) -> dict[str, str | None]:
    """``props`` with config-provider variables resolved, as Kafka validates them."""
    given = {k: v for k, v in props.items() if v is not None}
    if not keys_with_variables(given):
        return dict(props)
    originals = {k: str(v) for k, v in worker.originals().items() if v is not None}
    resolved = resolve(originals, given)
    return {k: resolved.get(k) if v is not None else None for k, v in props.items()}


def _with_variables(infos: ConfigInfos, raw: Mapping[str, str | None]) -> ConfigInfos:
    """The validation answer shows the ``${...}`` a user gave, never the resolved value
    (Kafka echoes resolved values of non-password keys; sparkcat does not)."""
    keys = keys_with_variables({k: v for k, v in raw.items() if v is not None})
    if not keys:
        return infos
    configs = []
    for info in infos.configs:
        value = info.value
        if value is not None and value.name in keys and value.value != "[hidden]":
            info = replace(info, value=replace(value, value=raw[value.name]))
        configs.append(info)
    return replace(infos, configs=configs)


def ensure_valid(validation: Validation) -> None:
    """Raise Kafka's 400 ``Connector configuration is invalid ...`` if there were errors."""
    if validation.infos.error_count > 0:
        raise BadRequestError(invalid_config_message(validation.infos))


def valid_config(validation: Validation, props: Mapping[str, str | None]) -> dict[str, str]:
    """``props`` as a string map once ``validation`` found no error; else Kafka's 400.

    A valid config holds no ``None`` (a JSON ``null`` is an error), so nothing is dropped here.
    """
    ensure_valid(validation)
    return {key: value for key, value in props.items() if value is not None}


def _client_overrides(
    props: Mapping[str, str | None], client: ClientType, policy: str
) -> ConfigInfos:
    """``<client>.override.*`` entries: each value parsed to the type Kafka's client config
    gives its key (so a password shows as ``[hidden]``), then checked against the policy."""
    prefix = f"{client}.override."
    keys = client_config_def(client).config_keys()
    values = []
    for key, raw in props.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix) :]
        value = _parsed_override(name, raw, keys.get(name))
        allowed = policy == "All" or (policy == "Principal" and name in _PRINCIPAL_ALLOWED)
        if not allowed:
            value.add_error_message(
                f"The '{policy}' policy does not allow '{name}' to be overridden in the "
                "connector configuration."
            )
        values.append(value)
    return prefixed_result(values, prefix, keys)


def _parsed_override(name: str, raw: str | None, key: ConfigKey | None) -> ConfigValue:
    # Class names are Java's and never loaded here, so a CLASS value stays the text given.
    # Kafka lets a parse error escape the whole request; here it is the entry's error.
    if key is None or raw is None or key.type is ConfigType.CLASS:
        return ConfigValue(name, raw)
    try:
        return ConfigValue(name, parse_type(name, raw, key.type))
    except ConfigError as exc:
        value = ConfigValue(name, raw)
        value.add_error_message(str(exc))
        return value


def _reject_nulls(props: Mapping[str, str | None], values: list[ConfigValue]) -> None:
    """Attach Kafka's null-value error to each key given as JSON ``null``.

    The error goes on the *last* entry for the key: ``generate_result`` keeps one entry per
    name and the connector's own ``validate()`` entries come after the framework's, so an
    error put on the framework's entry of a connector-defined key would be dropped.
    """
    last = {value.name: value for value in values}
    for name, raw in props.items():
        if raw is not None:
            continue
        entry = last.get(name)
        if entry is None:
            entry = ConfigValue(name)
            values.append(entry)
            last[name] = entry
        if NULL_VALUE_MESSAGE not in entry.error_messages:
            entry.add_error_message(NULL_VALUE_MESSAGE)


def _validate_lease_bounds(
    props: Mapping[str, str | None], validated: dict[str, ConfigValue]
) -> None:
    for key in (MAX_BATCH_MS_CONFIG, MAX_BATCH_RECORDS_CONFIG):
        raw: Any = props.get(key)
        if raw is None:
            continue
        try:
            number = int(str(raw).strip())
            if number < 1:
                raise ValueError
        except ValueError:
            entry = validated.setdefault(key, ConfigValue(key, raw))
            entry.add_error_message(str(ConfigError(key, raw, "Value must be at least 1")))


# -- exactly-once preflight (KIP-618; Kafka's DistributedHerder) -------------------------------
EOS_NOT_ENABLED_MESSAGE = "This worker does not have exactly-once source support enabled."
EOS_NULL_MESSAGE = (
    "The connector does not implement the API required for preflight validation of "
    "exactly-once source support. Please consult the documentation for the connector to "
    "determine whether it supports exactly-once semantics, and then consider reconfiguring the "
    'connector to use the value "requested" for this property (which will disable this '
    "preflight check and allow the connector to be created)."
)
EOS_UNSUPPORTED_MESSAGE = (
    "The connector does not support exactly-once semantics with the provided configuration."
)
BOUNDARY_NULL_MESSAGE = (
    "This connector has returned a null value from its canDefineTransactionBoundaries method, "
    "which is not permitted. The connector will be treated as if it cannot define its own "
    "transaction boundaries, and cannot be configured with 'transaction.boundary' set to "
    "'connector'."
)
BOUNDARY_UNSUPPORTED_MESSAGE = (
    "The connector does not support connector-defined transaction boundaries with the given "
    "configuration. Please reconfigure it to use a different transaction boundary definition."
)


def _is_distributed(worker: WorkerConfig) -> bool:
    # Duck-typed: the herder layer does not import the distributed package.
    return hasattr(type(worker), "exactly_once_source_enabled")


def _eos_enabled(worker: WorkerConfig) -> bool:
    return bool(getattr(worker, "exactly_once_source_enabled", False))


def validate_exactly_once(
    props: Mapping[str, str | None],
    validated: dict[str, ConfigValue],
    connector: SourceConnector,
    worker_enabled: bool,
) -> None:
    """Kafka's ``validateSourceConnectorExactlyOnceSupport`` and
    ``validateSourceConnectorTransactionBoundary``: errors go on the
    ``exactly.once.support`` / ``transaction.boundary`` entries, only when those passed their
    own validation."""
    raw = {k: v for k, v in props.items() if v is not None}
    support = validated.get("exactly.once.support")
    if _chosen(support, "required"):
        assert support is not None
        if not worker_enabled:
            support.add_error_message(EOS_NOT_ENABLED_MESSAGE)
        _preflight(support, lambda: connector.exactly_once_support(raw), _eos_message)
    boundary = validated.get("transaction.boundary")
    if _chosen(boundary, "connector"):
        assert boundary is not None
        ask = lambda: connector.can_define_transaction_boundaries(raw)  # noqa: E731
        _preflight(boundary, ask, _boundary_message)


def _chosen(entry: ConfigValue | None, value: str) -> bool:
    """The key passed its own validation and holds ``value`` (case-insensitive)."""
    return entry is not None and not entry.error_messages and str(entry.value).lower() == value


def _eos_message(answer: Any) -> str | None:
    if answer is None:
        return EOS_NULL_MESSAGE
    return None if answer is ExactlyOnceSupport.SUPPORTED else EOS_UNSUPPORTED_MESSAGE


def _boundary_message(answer: Any) -> str | None:
    if answer is None:
        return BOUNDARY_NULL_MESSAGE
    return (
        None if answer is ConnectorTransactionBoundaries.SUPPORTED else BOUNDARY_UNSUPPORTED_MESSAGE
    )


def _preflight(entry: ConfigValue, ask: Any, message_for: Any) -> None:
    try:
        message = message_for(ask())
    except Exception as exc:
        text = str(exc).strip()
        message = "An unexpected error occurred during validation" + (
            f": {text}" if text else "; please see the worker logs for more details."
        )
    if message is not None:
        entry.add_error_message(message)


def check_connector_name(name: str, config: Mapping[str, str | None]) -> dict[str, str | None]:
    """``config`` with ``name`` set; 400 if it holds a different name (Kafka's
    ``checkAndPutConnectorConfigName``)."""
    given = config.get(NAME_CONFIG)
    if given is not None and given != name:
        raise BadRequestError(
            f"Connector name configuration ({given}) doesn't match connector name in the URL "
            f"({name})"
        )
    return {**config, NAME_CONFIG: name}


__all__ = [
    "Validation",
    "check_connector_name",
    "connector_kind",
    "ensure_valid",
    "valid_config",
    "validate_connector_config",
    "validate_exactly_once",
]
