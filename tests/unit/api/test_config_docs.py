"""ConfigDef.to_rst / to_enriched_rst: Kafka's generated-docs layout (mirrors ConfigDefTest)."""

from __future__ import annotations

from sparkcat.api.config import ConfigDef, ConfigType, Importance, ValidString


def test_to_rst() -> None:
    definition = (
        ConfigDef()
        .define(
            "opt1", ConfigType.STRING, "a", ValidString.in_("a", "b", "c"), Importance.HIGH, "docs1"
        )
        .define("opt2", ConfigType.INT, importance=Importance.MEDIUM, documentation="docs2")
        .define(
            "opt3", ConfigType.LIST, ["a", "b"], importance=Importance.LOW, documentation="docs3"
        )
        .define("opt4", ConfigType.BOOLEAN, False, importance=Importance.LOW)
        .define_internal("hidden", ConfigType.INT, 1)
    )
    assert definition.to_rst() == (
        "``opt2``\n  docs2\n\n  * Type: int\n  * Importance: medium\n\n"
        "``opt1``\n  docs1\n\n  * Type: string\n  * Default: a\n"
        "  * Valid Values: [a, b, c]\n  * Importance: high\n\n"
        "``opt3``\n  docs3\n\n  * Type: list\n  * Default: a,b\n  * Importance: low\n\n"
        "``opt4``\n\n  * Type: boolean\n  * Default: false\n  * Importance: low\n\n"
    )


def test_to_rst_default_texts() -> None:
    definition = (
        ConfigDef()
        .define("empty", ConfigType.STRING, "", documentation="one\n\ntwo")
        .define("none", ConfigType.STRING, None, documentation="x")
    )
    assert definition.to_rst() == (
        '``empty``\n  one\n\n  two\n\n  * Type: string\n  * Default: ""\n'
        "  * Importance: medium\n\n"
        "``none``\n  x\n\n  * Type: string\n  * Default: null\n  * Importance: medium\n\n"
    )


def test_to_enriched_rst() -> None:
    definition = (
        ConfigDef()
        .define(
            "opt1.of.group1",
            ConfigType.STRING,
            "a",
            ValidString.in_("a", "b", "c"),
            Importance.HIGH,
            "Doc doc.",
            "Group One",
            0,
        )
        .define(
            "opt2.of.group1",
            ConfigType.INT,
            ConfigDef.NO_DEFAULT_VALUE,
            None,
            Importance.MEDIUM,
            "Doc doc doc.",
            "Group One",
            1,
            dependents=["some.option1", "some.option2"],
        )
        .define(
            "opt2.of.group2",
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.HIGH,
            "Doc doc doc doc.",
            "Group Two",
            1,
        )
        .define(
            "opt1.of.group2",
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.HIGH,
            "Doc doc doc doc doc.",
            "Group Two",
            0,
            dependents=["some.option"],
        )
        .define("poor.opt", ConfigType.STRING, "foo", None, Importance.HIGH, "Doc doc doc doc.")
    )
    assert definition.to_enriched_rst() == (
        "``poor.opt``\n  Doc doc doc doc.\n\n  * Type: string\n  * Default: foo\n"
        "  * Importance: high\n\n"
        "Group One\n^^^^^^^^^\n\n"
        "``opt1.of.group1``\n  Doc doc.\n\n  * Type: string\n  * Default: a\n"
        "  * Valid Values: [a, b, c]\n  * Importance: high\n\n"
        "``opt2.of.group1``\n  Doc doc doc.\n\n  * Type: int\n  * Importance: medium\n"
        "  * Dependents: ``some.option1``, ``some.option2``\n\n"
        "Group Two\n^^^^^^^^^\n\n"
        "``opt1.of.group2``\n  Doc doc doc doc doc.\n\n  * Type: boolean\n  * Default: false\n"
        "  * Importance: high\n  * Dependents: ``some.option``\n\n"
        "``opt2.of.group2``\n  Doc doc doc doc.\n\n  * Type: boolean\n  * Default: false\n"
        "  * Importance: high\n\n"
    )
