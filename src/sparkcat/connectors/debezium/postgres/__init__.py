"""The PostgreSQL connector: ``io.debezium.connector.postgresql.PostgresConnector``."""

from sparkcat.connectors.debezium.postgres.source_connector import PostgresConnector
from sparkcat.connectors.debezium.postgres.source_task import PostgresConnectorTask

__all__ = ["PostgresConnector", "PostgresConnectorTask"]
