from __future__ import annotations

import pytest

from sparkcat.api.config import ConfigDef, ConfigType
from sparkcat.api.errors import ConfigError
from sparkcat.api.records import SinkRecord, SourceRecord
from sparkcat.runtime.transformation_chain import TransformationChain, enrich_config_def
from sparkcat.transforms.filter import Filter
from sparkcat.transforms.insert_field import InsertField
from sparkcat.transforms.predicates.record_is_tombstone import RecordIsTombstone
from sparkcat.transforms.predicates.topic_name_matches import TopicNameMatches
from sparkcat.transforms.regex_router import RegexRouter

T = "org.apache.kafka.connect.transforms."
REGISTRY: dict[tuple[str, str], type] = {
    (T + "InsertField$Value", "transformation"): InsertField.Value,
    (T + "InsertField$Key", "transformation"): InsertField.Key,
    (T + "Filter", "transformation"): Filter,
    ("Filter", "transformation"): Filter,
    (T + "RegexRouter", "transformation"): RegexRouter,
    (T + "predicates.TopicNameMatches", "predicate"): TopicNameMatches,
    (T + "predicates.RecordIsTombstone", "predicate"): RecordIsTombstone,
}


def resolve(name: str, kind: str) -> type:
    return REGISTRY[(name, kind)]


BASE = {
    "transforms": "insert, drop",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.static.field": "src",
    "transforms.insert.static.value": "sparkcat",
    "transforms.drop.type": "Filter",
    "transforms.drop.predicate": "keep",
    "transforms.drop.negate": "true",
    "predicates": "keep",
    "predicates.keep.type": T + "predicates.TopicNameMatches",
    "predicates.keep.pattern": "keep-.*",
}


@pytest.mark.parametrize("kind", ["source", "sink"])
def test_chain_with_negated_predicate(kind):
    chain = TransformationChain.from_config(BASE, resolve)
    assert len(chain) == 2

    def record(topic):
        if kind == "source":
            return SourceRecord(None, None, topic, value={"a": 1})
        return SinkRecord(topic, 0, None, None, None, {"a": 1}, 5)

    kept = chain.apply(record("keep-1"))
    assert kept.value == {"a": 1, "src": "sparkcat"} and kept.topic == "keep-1"
    assert chain.apply(record("other")) is None
    chain.close()


def test_predicate_gates_transform_and_stops_at_drop():
    props = {
        "transforms": "route,tomb,insert",
        "transforms.route.type": T + "RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "x-$1",
        "transforms.route.predicate": "tombstone",
        "transforms.tomb.type": T + "Filter",
        "transforms.tomb.predicate": "tombstone",
        "transforms.insert.type": T + "InsertField$Key",
        "transforms.insert.topic.field": "t",
        "predicates": "tombstone",
        "predicates.tombstone.type": T + "predicates.RecordIsTombstone",
    }
    chain = TransformationChain.from_config(props, resolve)
    out = chain.apply(SourceRecord(None, None, "a", key={}, value=1))
    assert out.topic == "a" and out.key == {"t": "a"}
    assert chain.apply(SourceRecord(None, None, "a", key={}, value=None)) is None


def test_empty_chain_passes_records():
    record = SourceRecord(None, None, "t", value=1)
    assert TransformationChain.from_config({}, resolve).apply(record) is record


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"transforms": "a,a"},
         "Invalid value [a, a] for configuration transforms: Duplicate alias provided."),
        ({"predicates": "keep,keep"},
         "Invalid value [keep, keep] for configuration predicates: Duplicate alias provided."),
        ({"transforms.insert.type": None},
         'Missing required configuration "transforms.insert.type" which has no default value.'),
        ({"transforms.insert.type": "Nope"},
         "Invalid value Nope for configuration transforms.insert.type: "
         "Class Nope could not be found."),
        ({"transforms.drop.predicate": "other"}, "Unknown configuration 'predicates.other.type'"),
        ({"predicates.keep.type": None},
         'Missing required configuration "predicates.keep.type" which has no default value.'),
        ({"transforms.insert.negate": "true"},
         "Config 'transforms.insert.negate' was provided but there is no config "
         "'transforms.insert.predicate' defining a predicate to be negated."),
        ({"transforms.drop.negate": "yes"},
         "Invalid value yes for configuration transforms.drop.negate: "
         "Expected value to be either true or false"),
        ({"transforms.insert.static.value": None},
         "Invalid value null for configuration static.value: "
         "No value specified for static field: src"),
    ],
)  # fmt: skip
def test_config_errors(change, message):
    props = {**BASE, **change}
    props = {k: v for k, v in props.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        TransformationChain.from_config(props, resolve)
    assert str(info.value) == message


def test_enrich_config_def_adds_alias_keys():
    base = (
        ConfigDef()
        .define("transforms", ConfigType.LIST, [])
        .define("predicates", ConfigType.LIST, [])
    )
    enriched = enrich_config_def(base, BASE, resolve)
    keys = enriched.config_keys()
    insert = [k for k in keys if k.startswith("transforms.insert.")]
    assert insert[:3] == [
        "transforms.insert.type",
        "transforms.insert.predicate",
        "transforms.insert.negate",
    ]
    assert "transforms.insert.static.field" in insert
    assert keys["transforms.insert.static.field"].group == "Transforms: insert"
    assert keys["transforms.insert.negate"].default is False
    assert keys["predicates.keep.pattern"].group == "Predicates: keep"
    assert set(base.config_keys()) == {"transforms", "predicates"}  # base untouched
    assert not [v for v in enriched.validate(BASE) if v.error_messages]


def test_enrich_reports_bad_class_and_negate_on_type_key():
    base = ConfigDef().define("transforms", ConfigType.LIST, [])
    props = {"transforms": "a,b", "transforms.a.type": "Nope", "transforms.b.type": "Filter",
             "transforms.b.negate": "true"}  # fmt: skip
    values = {v.name: v for v in enrich_config_def(base, props, resolve).validate(props)}
    assert values["transforms.a.type"].error_messages == [
        "Invalid value Nope for configuration transforms.a.type: Class Nope could not be found."
    ]
    assert (
        "there is no config 'transforms.b.predicate'"
        in values["transforms.b.type"].error_messages[0]
    )
    missing = enrich_config_def(base, {"transforms": "c"}, resolve).validate({"transforms": "c"})
    assert any("transforms.c.type" in m for v in missing for m in v.error_messages)
