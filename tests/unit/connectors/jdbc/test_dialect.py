"""URL translation, identifiers and statements of each dialect."""

from __future__ import annotations

import pytest

from sparkcat.api.errors import ConfigError
from sparkcat.connectors.jdbc.dialect import (
    MySqlDialect,
    PostgresDialect,
    SqliteDialect,
    TableId,
    dialect_for,
    to_sqlalchemy_url,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("jdbc:postgresql://db.example:5433/shop?user=u&password=p%21",
         "postgresql+psycopg://u:***@db.example:5433/shop"),
        ("jdbc:postgresql://localhost/shop", "postgresql+psycopg://localhost/shop"),
        ("jdbc:mysql://h:3306/app?user=root", "mysql+pymysql://root@h:3306/app"),
        ("jdbc:mariadb://h/app", "mysql+pymysql://h/app"),
        ("jdbc:sqlite:/tmp/x.db", "sqlite:////tmp/x.db"),
        ("jdbc:sqlite:relative.db", "sqlite:///relative.db"),
        ("jdbc:sqlite::memory:", "sqlite://"),
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("mysql://u@h/db", "mysql+pymysql://u@h/db"),
        ("mysql+pymysql://u@h/db", "mysql+pymysql://u@h/db"),
        ("sqlite:///a.db", "sqlite:///a.db"),
    ],
)  # fmt: skip
def test_urls_translate(url: str, expected: str) -> None:
    assert to_sqlalchemy_url(url).render_as_string(hide_password=True) == expected


def test_jdbc_password_parameter_is_decoded() -> None:
    url = to_sqlalchemy_url("jdbc:postgresql://h/db?user=u&password=p%21")
    assert url.password == "p!"


def test_connection_user_and_password_win_over_the_url() -> None:
    url = to_sqlalchemy_url("jdbc:postgresql://h/db?user=a&password=b", "c", "d")
    assert (url.username, url.password) == ("c", "d")


def test_unsupported_jdbc_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Unsupported JDBC URL"):
        to_sqlalchemy_url("jdbc:oracle:thin:@h:1521/x")


def test_dialect_from_url_and_from_dialect_name() -> None:
    assert isinstance(dialect_for(to_sqlalchemy_url("jdbc:mysql://h/d")), MySqlDialect)
    assert isinstance(dialect_for(to_sqlalchemy_url("jdbc:sqlite:a")), SqliteDialect)
    named = dialect_for(to_sqlalchemy_url("jdbc:sqlite:a"), "PostgreSqlDatabaseDialect")
    assert isinstance(named, PostgresDialect)


def test_quoting_follows_quote_sql_identifiers() -> None:
    assert PostgresDialect().quote('a"b') == '"a""b"'
    assert MySqlDialect().quote("a`b") == "`a``b`"
    assert PostgresDialect(quote=False).quote("Users") == "Users"


def test_table_ids_and_fully_qualified_names() -> None:
    pg, my, lite = PostgresDialect(), MySqlDialect(), SqliteDialect()
    assert pg.parse_table("shop.public.users", None, None) == TableId("shop", "public", "users")
    assert pg.parse_table("users", "shop", "public").fqn == "shop.public.users"
    assert pg.table(TableId("shop", "public", "users")) == '"public"."users"'
    assert my.parse_table("app.users", None, None) == TableId("app", None, "users")
    assert my.parse_table("app.users", None, None).fqn == "app.users"
    assert my.table(TableId("app", None, "users")) == "`app`.`users`"
    assert lite.parse_table("users", None, None).fqn == "users"


def test_upserts_are_each_databases_native_statement() -> None:
    assert PostgresDialect().upsert('"t"', ["id"], ["a", "b"]) == (
        'INSERT INTO "t" ("id", "a", "b") VALUES (%s, %s, %s) ON CONFLICT ("id") DO UPDATE SET '
        '"a"=EXCLUDED."a", "b"=EXCLUDED."b"'
    )
    assert PostgresDialect().upsert('"t"', ["id"], []).endswith('ON CONFLICT ("id") DO NOTHING')
    assert MySqlDialect().upsert("`t`", ["id"], ["a"]) == (
        "INSERT INTO `t` (`id`, `a`) VALUES (%s, %s) ON DUPLICATE KEY UPDATE `a`=VALUES(`a`)"
    )
    assert SqliteDialect().upsert('"t"', ["id"], ["a"]) == (
        'INSERT OR REPLACE INTO "t" ("id", "a") VALUES (?, ?)'
    )


def test_update_delete_and_ddl() -> None:
    pg = PostgresDialect()
    assert pg.update('"t"', ["id"], ["a"]) == 'UPDATE "t" SET "a" = %s WHERE "id" = %s'
    assert pg.delete('"t"', ["k1", "k2"]) == 'DELETE FROM "t" WHERE "k1" = %s AND "k2" = %s'
    assert pg.create_table('"t"', [("id", "BIGINT", False), ("a", "TEXT", True)], ["id"]) == (
        'CREATE TABLE "t" (\n"id" BIGINT NOT NULL,\n"a" TEXT,\nPRIMARY KEY("id"))'
    )
    assert pg.add_column('"t"', "b", "INT") == 'ALTER TABLE "t" ADD "b" INT'
    assert SqliteDialect().add_column('"t"', "b", "INTEGER") == (
        'ALTER TABLE "t" ADD COLUMN "b" INTEGER'
    )
