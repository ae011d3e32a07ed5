"""Confluent's JDBC connectors (``io.confluent.connect.jdbc``) for PostgreSQL, MariaDB/MySQL
and SQLite, on SQLAlchemy 2.

Written against :mod:`sparkcat.api` only, as a third-party connector would be.
"""

from sparkcat.connectors.jdbc.sink_connector import JdbcSinkConnector
from sparkcat.connectors.jdbc.sink_task import JdbcSinkTask
from sparkcat.connectors.jdbc.source_connector import JdbcSourceConnector
from sparkcat.connectors.jdbc.source_task import JdbcSourceTask

__all__ = ["JdbcSinkConnector", "JdbcSinkTask", "JdbcSourceConnector", "JdbcSourceTask"]
