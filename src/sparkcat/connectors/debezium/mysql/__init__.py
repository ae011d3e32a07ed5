"""MySQL and MariaDB change data capture: reading the ROW binlog as a replica does
(``binlog_reader``), offsets in Debezium's shape (``offsets``) and the server checks
(``server``)."""
