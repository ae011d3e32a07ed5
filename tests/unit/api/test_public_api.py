"""The public surface of sparkcat.api: pinned names, and a light import."""

from __future__ import annotations

import json
import subprocess
import sys

import sparkcat.api

EXPECTED = [
    "CONVERTER_TYPE_CONFIG",
    "NO_DEFAULT_VALUE",
    "TOPICS_CONFIG",
    "TOPICS_REGEX_CONFIG",
    "AbstractConfig",
    "AlreadyExistsError",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "Config",
    "ConfigData",
    "ConfigDef",
    "ConfigError",
    "ConfigKey",
    "ConfigProvider",
    "ConfigType",
    "ConfigValue",
    "ConnectError",
    "ConnectRecord",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "Converter",
    "ConverterType",
    "DataError",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "Header",
    "HeaderConverter",
    "Headers",
    "IllegalWorkerStateError",
    "Importance",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "NotFoundError",
    "OffsetStorageReader",
    "Password",
    "Predicate",
    "Range",
    "Recommender",
    "RecordMetadata",
    "RetriableError",
    "SchemaBuilderError",
    "SchemaProjectorError",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceOffset",
    "SourcePartition",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TimestampType",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
]


def _isort_key(name: str) -> tuple[int, str]:
    # Constants first, then classes, as ruff's RUF022 keeps __all__.
    return (0 if name.isupper() else 1, name)


def test_all_is_pinned_and_sorted() -> None:
    assert sparkcat.api.__all__ == EXPECTED
    assert sorted(EXPECTED, key=_isort_key) == EXPECTED


def test_every_exported_name_exists() -> None:
    missing = [n for n in sparkcat.api.__all__ if not hasattr(sparkcat.api, n)]
    assert missing == []


def test_import_loads_nothing_heavy_and_no_other_sparkcat_package() -> None:
    code = (
        "import json, sys; import sparkcat.api; print(json.dumps(sorted(m for m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
    heavy = [
        m
        for m in loaded
        if m.split(".")[0] in {"pyspark", "confluent_kafka", "fastapi", "starlette", "pyarrow"}
    ]
    assert heavy == []
    ours = [m for m in loaded if m.startswith("sparkcat.") and not m.startswith("sparkcat.api")]
    assert ours == []
