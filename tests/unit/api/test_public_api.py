"""The public surface of sparkcat.api: pinned names, and a light import."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import sparkcat.api

EXPECTED = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "CONVERTER_TYPE_CONFIG",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "NO_DEFAULT_VALUE",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
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
    "ConnectDataBatch",
    "ConnectError",
    "ConnectRecord",
    "ConnectSchema",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "Converter",
    "ConverterType",
    "DataError",
    "Date",
    "Decimal",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "Field",
    "Header",
    "HeaderConverter",
    "Headers",
    "IllegalWorkerStateError",
    "Importance",
    "KafkaHeaders",
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
    "RecordMetadataBatch",
    "RetriableError",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaBuilderError",
    "SchemaProjector",
    "SchemaProjectorError",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkRecord",
    "SinkRecordBatch",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceOffset",
    "SourcePartition",
    "SourceRecord",
    "SourceRecordBatch",
    "SourceRun",
    "SourceTask",
    "SourceTaskContext",
    "Struct",
    "Task",
    "Time",
    "Timestamp",
    "TimestampType",
    "TopicPartition",
    "TransactionContext",
    "Transformation",
    "Type",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
]


def _isort_key(name: str) -> tuple[int, list[str | int]]:
    # Ruff's RUF022 order: constants first, then classes; digits compare as numbers.
    natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return (0 if name.isupper() else 1, natural)


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
