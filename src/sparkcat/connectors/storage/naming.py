"""Object names: ``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<offset>.<ext>``
with the start offset zero-padded to ``filename.offset.zero.pad.width`` digits (Java's
``%0<width>d``: longer offsets are not cut)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Naming:
    topics_dir: str
    directory_delim: str
    file_delim: str
    zero_pad_width: int
    extension: str

    def file_key(self, partitioned_path: str, topic: str, partition: int, start: int) -> str:
        """The object key of the file of ``topic``/``partition`` starting at ``start``;
        ``partitioned_path`` is the partitioner's ``<topic>/<encoded partition>``."""
        padded = str(start).zfill(self.zero_pad_width) if start >= 0 else str(start)
        d = self.file_delim
        name = f"{topic}{d}{partition}{d}{padded}{self.extension}"
        suffix = f"{partitioned_path}{self.directory_delim}{name}"
        if self.topics_dir.strip():
            return f"{self.topics_dir}{self.directory_delim}{suffix}"
        return suffix


__all__ = ["Naming"]
