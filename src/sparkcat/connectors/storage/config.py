"""Config keys of the storage sinks, spelled as Confluent's S3 sink and storage-common spell
them (``io.confluent.connect.s3.S3SinkConnectorConfig``, ``StorageSinkConnectorConfig``,
``StorageCommonConfig``, ``PartitionerConfig``), with Confluent's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from sparkcat import __version__
from sparkcat.api.config import (
    AbstractConfig,
    ConfigDef,
    ConfigType,
    Importance,
    LambdaValidator,
    Range,
    ValidString,
)
from sparkcat.api.errors import ConfigError

VERSION = __version__

S3_BUCKET_CONFIG = "s3.bucket.name"
REGION_CONFIG = "s3.region"
REGION_DEFAULT = "us-west-2"
STORE_URL_CONFIG = "store.url"
TOPICS_DIR_CONFIG = "topics.dir"
DIRECTORY_DELIM_CONFIG = "directory.delim"
FILE_DELIM_CONFIG = "file.delim"
FLUSH_SIZE_CONFIG = "flush.size"
ROTATE_INTERVAL_MS_CONFIG = "rotate.interval.ms"
ROTATE_SCHEDULE_INTERVAL_MS_CONFIG = "rotate.schedule.interval.ms"
FORMAT_CLASS_CONFIG = "format.class"
PARQUET_CODEC_CONFIG = "parquet.codec"
AVRO_CODEC_CONFIG = "avro.codec"
COMPRESSION_TYPE_CONFIG = "s3.compression.type"
ZERO_PAD_WIDTH_CONFIG = "filename.offset.zero.pad.width"
BYTEARRAY_EXTENSION_CONFIG = "format.bytearray.extension"
BYTEARRAY_SEPARATOR_CONFIG = "format.bytearray.separator"
BEHAVIOR_ON_NULL_VALUES_CONFIG = "behavior.on.null.values"
ROTATE_ON_PARTITION_CHANGE_CONFIG = "rotate.file.on.partition.change"
AWS_ACCESS_KEY_ID_CONFIG = "aws.access.key.id"
AWS_SECRET_ACCESS_KEY_CONFIG = "aws.secret.access.key"
PATH_STYLE_ACCESS_CONFIG = "s3.path.style.access.enabled"
PARTITIONER_CLASS_CONFIG = "partitioner.class"
PARTITION_FIELD_NAME_CONFIG = "partition.field.name"
PARTITION_DURATION_MS_CONFIG = "partition.duration.ms"
PATH_FORMAT_CONFIG = "path.format"
LOCALE_CONFIG = "locale"
TIMEZONE_CONFIG = "timezone"
TIMESTAMP_EXTRACTOR_CONFIG = "timestamp.extractor"
TIMESTAMP_FIELD_CONFIG = "timestamp.field"

_S3_FORMAT = "io.confluent.connect.s3.format."
PARQUET_FORMAT = _S3_FORMAT + "parquet.ParquetFormat"
JSON_FORMAT = _S3_FORMAT + "json.JsonFormat"
AVRO_FORMAT = _S3_FORMAT + "avro.AvroFormat"
BYTEARRAY_FORMAT = _S3_FORMAT + "bytearray.ByteArrayFormat"
DEFAULT_PARTITIONER = "io.confluent.connect.storage.partitioner.DefaultPartitioner"


def _ensure_s3_endpoint(name: str, value: Any) -> None:
    # Caught at validation so that create answers 400, rather than a task failing later
    # deep inside botocore on a scheme it cannot speak.
    if value is None or not str(value).strip():
        return  # AWS S3 itself
    parsed = urlparse(str(value))
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(
            name, value,
            "S3SinkConnector needs an http:// or https:// S3 endpoint (e.g. "
            "http://localhost:9000 for MinIO), or no store.url for AWS S3. To write files to a "
            "directory, use FileSystemSinkConnector with store.url=file:///path/to/dir",
        )  # fmt: skip


def _ensure_directory_url(name: str, value: Any) -> None:
    parsed = urlparse(str(value or ""))
    if parsed.scheme != "file" or not parsed.path:
        raise ConfigError(
            name, value,
            "FileSystemSinkConnector needs a file:// URL of a directory, e.g. file:///data/out. "
            "To write to S3, use S3SinkConnector",
        )  # fmt: skip


STORE_URL_MISSING = (
    f'Missing required configuration "{STORE_URL_CONFIG}" which has no default value.'
)
S3_ENDPOINT = LambdaValidator.with_(_ensure_s3_endpoint, "an http:// or https:// URL")
DIRECTORY_URL = LambdaValidator.with_(_ensure_directory_url, "a file:// URL of a directory")


def _base_def(store_url: LambdaValidator, store_url_doc: str) -> ConfigDef:
    long, string, s3 = ConfigType.LONG, ConfigType.STRING, "Storage"
    return (
        ConfigDef()
        .define(STORE_URL_CONFIG, string, None, validator=store_url,
                importance=Importance.HIGH, group=s3, documentation=store_url_doc)
        .define(TOPICS_DIR_CONFIG, string, "topics", importance=Importance.HIGH, group=s3,
                documentation="Top level directory to store the data ingested from Kafka.")
        .define(DIRECTORY_DELIM_CONFIG, string, "/", importance=Importance.MEDIUM, group=s3,
                documentation="Directory delimiter pattern")
        .define(FILE_DELIM_CONFIG, string, "+", importance=Importance.MEDIUM, group=s3,
                documentation="File delimiter pattern")
        .define(FORMAT_CLASS_CONFIG, string, importance=Importance.HIGH,
                validator=ValidString([PARQUET_FORMAT, JSON_FORMAT, AVRO_FORMAT,
                                       BYTEARRAY_FORMAT]),
                documentation="The format class to use when writing data to the store.")
        .define(FLUSH_SIZE_CONFIG, ConfigType.INT, importance=Importance.HIGH,
                validator=Range.at_least(1),
                documentation="Number of records written to store before invoking file commits.")
        .define(ROTATE_INTERVAL_MS_CONFIG, long, -1, importance=Importance.HIGH,
                documentation="The time interval in milliseconds to invoke file commits, "
                "measured on the timestamps the partitioner's timestamp.extractor gives.")
        .define(ROTATE_SCHEDULE_INTERVAL_MS_CONFIG, long, -1, importance=Importance.MEDIUM,
                documentation="The time interval in milliseconds to periodically invoke file "
                "commits, on the wall clock (not exactly-once; see docs/connectors/storage.md).")
        .define(ROTATE_ON_PARTITION_CHANGE_CONFIG, ConfigType.BOOLEAN, True,
                importance=Importance.LOW,
                documentation="With rotate.interval.ms: rotate when the encoded partition "
                "changes.")
        .define(PARQUET_CODEC_CONFIG, string, "snappy", importance=Importance.LOW,
                validator=ValidString(["none", "snappy", "gzip", "brotli", "lz4", "zstd"]),
                documentation="The Parquet compression codec to be used for output files.")
        .define(AVRO_CODEC_CONFIG, string, "null", importance=Importance.LOW,
                validator=ValidString(["null", "deflate", "snappy", "bzip2", "xz", "zstandard"]),
                documentation="The Avro compression codec to be used for output files.")
        .define(COMPRESSION_TYPE_CONFIG, string, "none", importance=Importance.LOW,
                validator=ValidString(["none", "gzip"]),
                documentation="Compression type for files written (JSON and ByteArray).")
        .define(ZERO_PAD_WIDTH_CONFIG, ConfigType.INT, 10, importance=Importance.LOW,
                validator=Range.at_least(0),
                documentation="Width to zero-pad offsets in the names of the files.")
        .define(BYTEARRAY_EXTENSION_CONFIG, string, ".bin", importance=Importance.LOW,
                documentation="Output file extension for ByteArrayFormat.")
        .define(BYTEARRAY_SEPARATOR_CONFIG, string, "\n", importance=Importance.LOW,
                documentation="String inserted between records for ByteArrayFormat.")
        .define(BEHAVIOR_ON_NULL_VALUES_CONFIG, string, "fail", importance=Importance.LOW,
                validator=ValidString(["ignore", "fail"]),
                documentation="How to handle records with a null value (tombstones).")
        .define(PARTITIONER_CLASS_CONFIG, string, DEFAULT_PARTITIONER,
                importance=Importance.HIGH,
                documentation="The partitioner to use when writing data to the store.")
        .define(PARTITION_FIELD_NAME_CONFIG, ConfigType.LIST, "",
                importance=Importance.MEDIUM,
                documentation="FieldPartitioner: the names of the fields to partition by.")
        .define(PARTITION_DURATION_MS_CONFIG, long, -1, importance=Importance.MEDIUM,
                documentation="TimeBasedPartitioner: the duration of a partition in ms.")
        .define(PATH_FORMAT_CONFIG, string, "", importance=Importance.MEDIUM,
                documentation="TimeBasedPartitioner: a Joda-Time pattern for the directories, "
                "e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH.")
        .define(LOCALE_CONFIG, string, "", importance=Importance.MEDIUM,
                documentation="TimeBasedPartitioner: the locale for the path format.")
        .define(TIMEZONE_CONFIG, string, "", importance=Importance.MEDIUM,
                documentation="TimeBasedPartitioner: the timezone (IANA id, e.g. UTC).")
        .define(TIMESTAMP_EXTRACTOR_CONFIG, string, "Wallclock", importance=Importance.MEDIUM,
                documentation="Record, RecordField or Wallclock.")
        .define(TIMESTAMP_FIELD_CONFIG, string, "timestamp", importance=Importance.MEDIUM,
                documentation="RecordField: the record field holding the timestamp.")
    )  # fmt: skip


FILESYSTEM_CONFIG_DEF = _base_def(
    DIRECTORY_URL, "Store URL: the file:// URL of the directory to write to (required)."
)

S3_CONFIG_DEF = (
    _base_def(S3_ENDPOINT, "Store URL: a custom S3 endpoint, an http:// or https:// "
              "URL (e.g. a MinIO or moto server); unset for AWS S3.")
    .define(S3_BUCKET_CONFIG, ConfigType.STRING, importance=Importance.HIGH,
            documentation="The S3 Bucket.")
    .define(REGION_CONFIG, ConfigType.STRING, REGION_DEFAULT, importance=Importance.MEDIUM,
            documentation="The AWS region to be used by the connector.")
    .define(AWS_ACCESS_KEY_ID_CONFIG, ConfigType.STRING, "", importance=Importance.HIGH,
            documentation="The AWS access key ID (empty: AWS's usual credential sources).")
    .define(AWS_SECRET_ACCESS_KEY_CONFIG, ConfigType.PASSWORD, None,
            importance=Importance.HIGH, documentation="The secret access key.")
    .define(PATH_STYLE_ACCESS_CONFIG, ConfigType.BOOLEAN, True, importance=Importance.LOW,
            documentation="Use path-style access for S3 requests.")
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SinkSettings:
    """The parsed settings a task uses."""

    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def parse(definition: ConfigDef, props: Mapping[str, str]) -> SinkSettings:
    """Parse and validate ``props`` (raises ``ConfigError`` with Kafka's message)."""
    config = AbstractConfig(definition, props)
    values = {name: config.get(name) for name in definition.names()}
    # White space is the point of a separator, but parsing trims strings (as Confluent
    # notes, reading the original instead).
    values[BYTEARRAY_SEPARATOR_CONFIG] = props.get(BYTEARRAY_SEPARATOR_CONFIG, "\n")
    return SinkSettings(values)
