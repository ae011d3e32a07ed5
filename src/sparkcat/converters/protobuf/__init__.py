"""Confluent's ``io.confluent.connect.protobuf.ProtobufConverter``."""

from sparkcat.converters.protobuf.converter import ProtobufConverter

__all__ = ["ProtobufConverter"]
