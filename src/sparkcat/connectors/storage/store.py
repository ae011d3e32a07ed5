"""Where objects go: an fsspec filesystem (s3fs for S3, the local filesystem for file://)
and the root path under which ``topics.dir`` lives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import fsspec

from sparkcat.api.config import Password
from sparkcat.api.errors import ConfigError, ConnectError
from sparkcat.connectors.storage import config as c


class Store:
    """Writes whole objects: one ``pipe`` per file (s3fs: one PUT, or a multipart upload
    completed at once for large files), so a reader never sees a partial object."""

    def __init__(self, fs: Any, root: str, *, local: bool = False) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        self.local = local

    def path(self, key: str) -> str:
        return f"{self.root}/{key}"

    def put(self, key: str, data: bytes) -> None:
        path = self.path(key)
        try:
            if self.local:
                _put_local(path, data)
            else:
                self.fs.pipe_file(path, data)
        except OSError as exc:
            # Not retriable in place: the task fails and its restart re-reads from the last
            # commit, rewriting the same objects (see docs/connectors/storage.md).
            raise ConnectError(f"Failed to write object {path}: {exc}") from exc


def _put_local(path: str, data: bytes) -> None:
    # Written to a temporary name, then renamed: readers see the whole file or none.
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "wb") as out:
        out.write(data)
    os.replace(temporary, path)


def s3_store(settings: Mapping[str, Any]) -> Store:
    """s3fs on ``s3.bucket.name``; ``store.url`` is a custom endpoint; credentials from the
    config keys when given, otherwise from AWS's usual sources (env, profile, IMDS)."""
    options: dict[str, Any] = {"client_kwargs": {"region_name": settings[c.REGION_CONFIG]}}
    endpoint = settings[c.STORE_URL_CONFIG]
    if endpoint:
        options["endpoint_url"] = endpoint
    key = settings[c.AWS_ACCESS_KEY_ID_CONFIG]
    secret = settings[c.AWS_SECRET_ACCESS_KEY_CONFIG]
    if key:
        options["key"] = key
        options["secret"] = secret.value if isinstance(secret, Password) else secret
    if settings[c.PATH_STYLE_ACCESS_CONFIG]:
        options["config_kwargs"] = {"s3": {"addressing_style": "path"}}
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **options)
    return Store(fs, settings[c.S3_BUCKET_CONFIG])


def filesystem_store(settings: Mapping[str, Any]) -> Store:
    """The local filesystem under the directory of ``store.url`` (``file:///data/out``)."""
    url = settings[c.STORE_URL_CONFIG]
    parsed = urlparse(url or "")
    if parsed.scheme != "file" or not parsed.path:
        raise ConfigError(
            f"Invalid value {url} for configuration {c.STORE_URL_CONFIG}: the filesystem "
            "sink needs a file:// URL of a directory, e.g. file:///data/out"
        )
    return Store(fsspec.filesystem("file"), parsed.path, local=True)


__all__ = ["Store", "filesystem_store", "s3_store"]
