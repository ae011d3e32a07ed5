"""The commit log that makes a Spark-native sink into a directory exactly-once.

A write never lands in the table directly. Each write ``n`` of a connector:

1. Spark writes the batch into ``<path>/_sparkcat_staging/<log id>/<n>/`` (Spark's own file
   commit protocol: the job's files appear there only if the job succeeded);
2. the log entry ``<path>/_sparkcat_commits/<log id>/<n>.json`` is written atomically (a
   temporary file renamed): the Kafka offsets the write covers and its files. **This is the
   commit point**: a write without its entry never happened;
3. the files are renamed into the table (same relative paths: ``field=value/part-....``);
4. the offsets go to consumer group ``connect-<name>``.

After a crash: the newest entry's files still in staging are renamed into place (step 3 again
is idempotent), staging is emptied, and the sink starts from the newest entry's offsets where
they are ahead of the group's. A crash before step 2 leaves only staging files, which are
deleted; the batch is written again from the same offsets. So no record is in the table twice
and none is lost. Directories starting with ``_`` are invisible to Spark's (and Hive's)
readers. File-system access goes through Hadoop's ``FileSystem`` (any URI Spark writes to).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

STAGING_DIR = "_sparkcat_staging"
COMMITS_DIR = "_sparkcat_commits"
# Entries kept per log: only the newest is ever read; a few more help a human reading it.
KEEP_ENTRIES = 10

_ENTRY = re.compile(r"^(\d+)\.json$")


def log_id(connector: str, tasks: list[int]) -> str:
    """The log of one connector's tasks run by one worker (names may hold any character)."""
    key = f"{connector}\0{','.join(map(str, tasks))}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    offsets: list[tuple[str, int, int]]
    files: list[str]


class CommitLog:
    """One log under a table path (see the module docs)."""

    def __init__(self, session: Any, path: str, log: str) -> None:
        jvm = session.sparkContext._jvm
        self._path_class = jvm.org.apache.hadoop.fs.Path
        self._io = jvm.org.apache.commons.io.IOUtils
        self.root = self._path_class(path)
        self.fs = self.root.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
        self.staging_root = self._path(f"{STAGING_DIR}/{log}")
        self.commits = self._path(f"{COMMITS_DIR}/{log}")

    def _path(self, relative: str, parent: Any = None) -> Any:
        return self._path_class(parent if parent is not None else self.root, relative)

    def staging(self, seq: int) -> Any:
        return self._path(str(seq), self.staging_root)

    def staging_uri(self, seq: int) -> str:
        return str(self.staging(seq).toString())

    # -- reading -------------------------------------------------------------------------

    def _seqs(self) -> list[int]:
        if not self.fs.exists(self.commits):
            return []
        seqs = []
        for status in self.fs.listStatus(self.commits):
            match = _ENTRY.match(status.getPath().getName())
            if match:
                seqs.append(int(match.group(1)))
        return sorted(seqs)

    def latest(self) -> Entry | None:
        seqs = self._seqs()
        if not seqs:
            return None
        stream = self.fs.open(self._path(f"{seqs[-1]}.json", self.commits))
        try:
            doc = orjson.loads(self._io.toByteArray(stream))
        finally:
            stream.close()
        offsets = [(str(t), int(p), int(o)) for t, p, o in doc["offsets"]]
        return Entry(int(doc["seq"]), offsets, list(doc["files"]))

    def staged_files(self, seq: int) -> list[str]:
        """The data files a write left in its staging directory (relative paths)."""
        base = self.staging(seq)
        if not self.fs.exists(base):
            return []
        prefix = str(base.toUri().getPath()).rstrip("/") + "/"
        files = []
        found = self.fs.listFiles(base, True)
        while found.hasNext():
            path = str(found.next().getPath().toUri().getPath())
            relative = path[len(prefix) :] if path.startswith(prefix) else path
            if not any(part.startswith(("_", ".")) for part in relative.split("/")):
                files.append(relative)
        return sorted(files)

    # -- writing -------------------------------------------------------------------------

    def commit(self, seq: int, offsets: list[tuple[str, int, int]], files: list[str]) -> None:
        """Step 2: the entry, written to a hidden name and renamed (atomic on HDFS and local
        file systems; object stores need a committer that makes it so)."""
        self.fs.mkdirs(self.commits)
        doc = orjson.dumps({"seq": seq, "offsets": offsets, "files": files})
        tmp = self._path(f".{seq}.json.tmp", self.commits)
        out = self.fs.create(tmp, True)
        try:
            out.write(doc)
        finally:
            out.close()
        target = self._path(f"{seq}.json", self.commits)
        if not self.fs.rename(tmp, target):
            raise OSError(f"Could not write the commit log entry {target.toString()}")

    def publish(self, entry: Entry) -> int:
        """Step 3 (idempotent): move ``entry``'s staged files into the table; how many moved."""
        staging = self.staging(entry.seq)
        moved = 0
        for relative in entry.files:
            source = self._path(relative, staging)
            if not self.fs.exists(source):
                continue  # moved before a crash
            target = self._path(relative)
            self.fs.mkdirs(target.getParent())
            if not self.fs.rename(source, target):
                raise OSError(f"Could not move {source.toString()} to {target.toString()}")
            moved += 1
        return moved

    def clean(self, keep_after: int) -> None:
        """Drop staging left by writes that never committed, and old entries."""
        if self.fs.exists(self.staging_root):
            for status in self.fs.listStatus(self.staging_root):
                self.fs.delete(status.getPath(), True)
        seqs = self._seqs()
        for seq in seqs[:-KEEP_ENTRIES]:
            if seq < keep_after:
                self.fs.delete(self._path(f"{seq}.json", self.commits), False)

    def recover(self) -> Entry | None:
        """After a (possible) crash: finish the newest write's moves, drop the rest of
        staging; the newest entry (its offsets are where the sink resumes) or ``None``."""
        entry = self.latest()
        if entry is not None:
            self.publish(entry)
        self.clean(entry.seq if entry is not None else 0)
        return entry
