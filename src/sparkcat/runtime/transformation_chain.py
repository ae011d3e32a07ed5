"""The SMT chain of a connector: ``transforms=a,b`` with per-alias configs and predicates.

Kafka splits this between ``ConnectorConfig.transformationStages()``/``enrich()``,
``TransformationStage`` and ``TransformationChain``. Here:

* :meth:`TransformationChain.from_config` builds the configured stages from a connector config;
* :func:`enrich_config_def` adds the per-alias keys to a connector ConfigDef for validation.

Classes are resolved by an injected ``resolve(class_name, kind)`` (the plugin registry), with
``kind`` ``"transformation"`` or ``"predicate"``; it raises when the name is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigKey, ConfigType, Importance, LambdaValidator, Width
from sparkcat.api.errors import ConfigError
from sparkcat.api.transform import Predicate, Transformation

Resolver = Callable[[str, str], type]

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"
TRANSFORMATION_KIND = "transformation"
PREDICATE_KIND = "predicate"

_LIST_SPLIT = re.compile(r"\s*,\s*")


class TransformationStage:
    """One transformation, applied when it has no predicate or ``negate XOR predicate.test``;
    otherwise the record passes unchanged."""

    __slots__ = ("alias", "negate", "predicate", "transformation")

    def __init__(
        self,
        transformation: Transformation[Any],
        predicate: Predicate[Any] | None = None,
        negate: bool = False,
        alias: str = "",
    ) -> None:
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate
        self.alias = alias

    def apply(self, record: Any) -> Any:
        predicate = self.predicate
        if predicate is None or self.negate != bool(predicate.test(record)):
            return self.transformation.apply(record)
        return record

    def close(self) -> None:
        for plugin in (self.transformation, self.predicate):
            if plugin is not None:
                try:
                    plugin.close()
                except Exception:
                    pass

    def __repr__(self) -> str:
        return (
            f"TransformationStage{{predicate={self.predicate!r}, "
            f"transformation={self.transformation!r}, negate={str(self.negate).lower()}}}"
        )


class TransformationChain:
    """The ordered stages of a connector; :meth:`apply` returns ``None`` once a stage drops the
    record (later stages do not see it)."""

    __slots__ = ("_apply_all", "stages")

    def __init__(self, stages: Sequence[TransformationStage] = ()) -> None:
        self.stages: tuple[TransformationStage, ...] = tuple(stages)

    @classmethod
    def from_config(cls, props: Mapping[str, str], resolve: Resolver) -> TransformationChain:
        """Instantiate and configure the chain from a connector's config.

        Each transformation is configured with its ``transforms.<a>.`` keys (prefix stripped,
        ``predicate``/``negate`` removed, ``type`` kept, as in Kafka); each predicate with its
        ``predicates.<p>.`` keys. Raises :class:`ConfigError` with Kafka's messages.
        """
        aliases = _aliases(props, TRANSFORMS_CONFIG)
        predicate_aliases = set(_aliases(props, PREDICATES_CONFIG))
        stages: list[TransformationStage] = []
        try:
            for alias in aliases:
                stages.append(_stage(props, alias, predicate_aliases, resolve))
        except BaseException:
            for stage in stages:
                stage.close()
            raise
        return cls(stages)

    def apply(self, record: Any) -> Any:
        for stage in self.stages:
            record = stage.apply(record)
            if record is None:
                return None
        return record

    def close(self) -> None:
        for stage in self.stages:
            stage.close()

    def __len__(self) -> int:
        return len(self.stages)

    def __repr__(self) -> str:
        return "TransformationChain{" + ",".join(repr(s) for s in self.stages) + "}"


# -- parsing ----------------------------------------------------------------------------------


def parse_list(value: Any) -> list[str]:
    """A LIST config value the way Kafka's ConfigDef parses it (``"a, b"`` → ``[a, b]``)."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip()
    return [] if not text else _LIST_SPLIT.split(text)


def _aliases(props: Mapping[str, Any], config: str) -> list[str]:
    aliases = parse_list(props.get(config))
    if len(aliases) != len(set(aliases)):
        raise ConfigError(config, "[" + ", ".join(aliases) + "]", "Duplicate alias provided.")
    return aliases


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _parse_boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(name, value, "Expected value to be either true or false")


def _resolve(props: Mapping[str, Any], type_key: str, kind: str, resolve: Resolver) -> type:
    class_name = props.get(type_key)
    if class_name is None:
        raise ConfigError(
            f'Missing required configuration "{type_key}" which has no default value.'
        )
    return _resolve_class(type_key, str(class_name).strip(), kind, resolve)


def _resolve_class(type_key: str, class_name: str, kind: str, resolve: Resolver) -> type:
    try:
        cls = resolve(class_name, kind)
    except Exception as e:
        raise ConfigError(type_key, class_name, f"Class {class_name} could not be found.") from e
    method = "apply" if kind == TRANSFORMATION_KIND else "test"
    if not isinstance(cls, type) or not callable(getattr(cls, method, None)):
        raise ConfigError(type_key, class_name, f"Not a {kind.capitalize()}")
    return cls


def _validate_negate(props: Mapping[str, Any], prefix: str) -> None:
    negate, predicate = prefix + NEGATE_CONFIG, prefix + PREDICATE_CONFIG
    if negate in props and predicate not in props:
        raise ConfigError(
            f"Config '{negate}' was provided but there is no config '{predicate}' defining a "
            "predicate to be negated."
        )


def _stage(
    props: Mapping[str, Any], alias: str, predicate_aliases: set[str], resolve: Resolver
) -> TransformationStage:
    prefix = f"{TRANSFORMS_CONFIG}.{alias}."
    _validate_negate(props, prefix)
    cls = _resolve(props, prefix + "type", TRANSFORMATION_KIND, resolve)
    configs = _with_prefix(props, prefix)
    predicate_alias = configs.pop(PREDICATE_CONFIG, None)
    negate_value = configs.pop(NEGATE_CONFIG, None)
    transformation = cls()
    transformation.configure(configs)
    if predicate_alias is None:
        return TransformationStage(transformation, alias=alias)
    negate = False if negate_value is None else _parse_boolean(prefix + NEGATE_CONFIG, negate_value)
    try:
        predicate_prefix = f"{PREDICATES_CONFIG}.{predicate_alias}."
        if predicate_alias not in predicate_aliases:
            raise ConfigError(f"Unknown configuration '{predicate_prefix}type'")
        predicate = _resolve(props, predicate_prefix + "type", PREDICATE_KIND, resolve)()
        predicate.configure(_with_prefix(props, predicate_prefix))
    except BaseException:
        transformation.close()
        raise
    return TransformationStage(transformation, predicate, negate, alias)


# -- validation -------------------------------------------------------------------------------


def enrich_config_def(
    base_def: ConfigDef,
    props: Mapping[str, Any],
    resolve: Resolver,
    recommended: Mapping[str, Iterable[str]] | None = None,
) -> ConfigDef:
    """A copy of ``base_def`` plus, per transform alias, ``transforms.<a>.type`` (CLASS,
    required), implicit ``transforms.<a>.predicate`` and ``.negate``, and the transformation's
    own keys under ``transforms.<a>.``, all in group ``Transforms: <a>``; likewise per predicate
    alias under ``predicates.<p>.`` (group ``Predicates: <p>``).

    The ``type`` key's validator reports an unknown class and a ``negate`` without
    ``predicate``; when a class cannot be resolved only its ``type`` key is added (Kafka's
    ``requireFullConfig=false``). Duplicate aliases are reported by ``base_def``'s own
    ``transforms``/``predicates`` validators, so they are de-duplicated here.
    ``recommended`` (kind → class names) feeds the ``type`` keys' recommenders.
    """
    enriched = ConfigDef(base_def)
    for kind, config, group in (
        (TRANSFORMATION_KIND, TRANSFORMS_CONFIG, TRANSFORMS_GROUP),
        (PREDICATE_KIND, PREDICATES_CONFIG, PREDICATES_GROUP),
    ):
        names = list((recommended or {}).get(kind, ()))
        for alias in dict.fromkeys(parse_list(props.get(config))):
            _enrich_alias(enriched, props, resolve, kind, config, f"{group}: {alias}", alias, names)
    return enriched


class _Recommender:
    __slots__ = ("_names",)

    def __init__(self, names: list[str]) -> None:
        self._names = names

    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]:
        return list(self._names)

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool:
        return True


def _enrich_alias(
    enriched: ConfigDef,
    props: Mapping[str, Any],
    resolve: Resolver,
    kind: str,
    config: str,
    group: str,
    alias: str,
    recommended: list[str],
) -> None:
    prefix = f"{config}.{alias}."
    type_key = prefix + "type"

    def validate_type(name: str, value: Any) -> None:
        if kind == TRANSFORMATION_KIND:
            _validate_negate(props, prefix)
        if value is not None:
            _resolve_class(type_key, str(value), kind, resolve)

    enriched.define(
        type_key,
        ConfigType.CLASS,
        validator=LambdaValidator.with_(validate_type, f"valid configs for {alias} {kind}"),
        importance=Importance.HIGH,
        documentation=f"Class for the '{alias}' {kind}.",
        group=group,
        order_in_group=0,
        width=Width.LONG,
        display_name=f"{kind.capitalize()} type for {alias}",
        recommender=_Recommender(recommended),
    )
    child = ConfigDef()
    if kind == TRANSFORMATION_KIND:
        child.define(
            PREDICATE_CONFIG,
            ConfigType.STRING,
            None,
            importance=Importance.MEDIUM,
            documentation="The alias of a predicate used to determine whether to apply this "
            "transformation.",
        ).define(
            NEGATE_CONFIG,
            ConfigType.BOOLEAN,
            False,
            importance=Importance.MEDIUM,
            documentation="Whether the configured predicate should be negated.",
        )
    class_name = props.get(type_key)
    if class_name is None:
        return
    try:
        plugin_def = _resolve_class(type_key, str(class_name).strip(), kind, resolve)().config()
    except Exception:
        # The type key's validator reports the problem; only the key itself is defined.
        return
    for key in plugin_def.config_keys().values():
        if key.name in (PREDICATE_CONFIG, NEGATE_CONFIG) and kind == TRANSFORMATION_KIND:
            continue  # masked by the implicit keys
        child.define_key(key)
    for order, key in enumerate(child.config_keys().values(), start=1):
        enriched.define_key(_embedded(prefix, group, order, key))


def _embedded(prefix: str, group: str, order: int, key: ConfigKey) -> ConfigKey:
    validator = key.validator
    embedded_validator = None
    if validator is not None:
        base = validator
        embedded_validator = LambdaValidator.with_(
            lambda name, value: base(name[len(prefix) :], value), lambda: str(base)
        )
    return ConfigKey(
        prefix + key.name,
        key.type,
        key.default,
        embedded_validator,
        key.importance,
        key.documentation,
        group if key.group is None else f"{group}: {key.group}",
        order,
        key.width,
        key.display_name,
        [prefix + d for d in key.dependents],
        key.recommender,
    )


__all__ = [
    "NEGATE_CONFIG",
    "PREDICATES_CONFIG",
    "PREDICATE_CONFIG",
    "TRANSFORMS_CONFIG",
    "Resolver",
    "TransformationChain",
    "TransformationStage",
    "enrich_config_def",
    "parse_list",
]
