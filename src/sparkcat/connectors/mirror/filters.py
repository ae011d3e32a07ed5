"""Which topics, groups and topic configs are replicated (Kafka's ``DefaultTopicFilter``,
``DefaultGroupFilter``, ``DefaultConfigPropertyFilter``).

Each takes include and exclude lists of names or regular expressions that must match the
whole name; excludes win; an empty include list matches nothing. Kafka's ``*.filter.class``
keys are accepted, but only the default filters exist here.
"""

from __future__ import annotations

import re

from sparkcat.connectors.mirror.config import (
    CONFIG_PROPERTIES_EXCLUDE,
    GROUPS,
    GROUPS_EXCLUDE,
    TOPICS,
    TOPICS_DEFAULT,
    TOPICS_EXCLUDE,
    TOPICS_EXCLUDE_DEFAULT,
    MirrorConfig,
)


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def compile_pattern_list(patterns: list[str]) -> re.Pattern[str] | None:
    """Kafka's ``MirrorUtils.compilePatternList``: one alternation; ``None`` for no patterns."""
    if not patterns:
        return None
    return re.compile("|".join(patterns))


class _IncludeExclude:
    __slots__ = ("_exclude", "_include")

    def __init__(self, include: list[str], exclude: list[str]) -> None:
        self._include = compile_pattern_list(include)
        self._exclude = compile_pattern_list(exclude)

    def __call__(self, name: str) -> bool:
        included = self._include is not None and self._include.fullmatch(name) is not None
        excluded = self._exclude is not None and self._exclude.fullmatch(name) is not None
        return included and not excluded


class TopicFilter(_IncludeExclude):
    """``topics`` minus ``topics.exclude``."""

    @classmethod
    def from_config(cls, config: MirrorConfig) -> TopicFilter:
        # The checkpoint connector filters topics too without defining the keys (as Kafka's
        # TopicFilterConfig): read them from the props, with the source connector's defaults.
        return cls(
            _list(config.props.get(TOPICS, TOPICS_DEFAULT)),
            _list(config.props.get(TOPICS_EXCLUDE, TOPICS_EXCLUDE_DEFAULT)),
        )


class GroupFilter(_IncludeExclude):
    """``groups`` minus ``groups.exclude``."""

    @classmethod
    def from_config(cls, config: MirrorConfig) -> GroupFilter:
        return cls(config.get_list(GROUPS), config.get_list(GROUPS_EXCLUDE))


class ConfigPropertyFilter:
    """Topic config properties to copy: all but ``config.properties.exclude``."""

    __slots__ = ("_exclude",)

    def __init__(self, exclude: list[str]) -> None:
        self._exclude = compile_pattern_list(exclude)

    @classmethod
    def from_config(cls, config: MirrorConfig) -> ConfigPropertyFilter:
        return cls(config.get_list(CONFIG_PROPERTIES_EXCLUDE))

    def __call__(self, name: str) -> bool:
        return self._exclude is None or self._exclude.fullmatch(name) is None


__all__ = ["ConfigPropertyFilter", "GroupFilter", "TopicFilter", "compile_pattern_list"]
