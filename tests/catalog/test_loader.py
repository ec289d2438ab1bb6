"""Loading and validating rule catalogs: the shipped one, and each kind of broken one."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.catalog.loader import default_catalog_dir
from dpcheck.errors import CatalogError, DpcheckError
from dpcheck.model import Severity
from tests.catalog.conftest import WriteRule, valid_rule

REPO_RULES = Path(__file__).resolve().parents[2] / "rules"


def test_shipped_catalog_keeps_its_rules_with_their_severities() -> None:
    """Rule ids are a contract: a new rule extends the catalog, none is dropped or changed."""
    catalog = load_catalog()
    assert {r.id: r.severity for r in catalog.rules}.items() >= {
        "DP001": Severity.WARNING,
        "DP101": Severity.ERROR,
        "DP102": Severity.ERROR,
        "DP103": Severity.WARNING,
        "DP104": Severity.ERROR,
        "DP105": Severity.WARNING,
        "DP106": Severity.INFO,
    }.items()
    assert catalog.get("DP102").name == "shuffle-accounted-as-poisson"


def test_every_shipped_rule_has_two_failing_and_two_passing_examples() -> None:
    for rule in load_catalog().rules:
        assert len(rule.failing_examples) >= 2, rule.id
        assert len(rule.passing_examples) >= 2, rule.id
        assert rule.references, rule.id


def test_unparsable_file_examples_are_checked_now_not_pending() -> None:
    assert not any(e.pending for e in load_catalog().get("DP001").examples)


def test_default_catalog_is_the_repository_rules_folder_and_is_cached() -> None:
    location = Path(str(default_catalog_dir()))
    assert location == REPO_RULES or location.parts[-3:] == ("dpcheck", "catalog", "data")
    assert load_catalog() is load_catalog()
    assert load_catalog(REPO_RULES) == load_catalog()


def test_valid_catalog_is_parsed_field_by_field(write_rule: WriteRule) -> None:
    directory = write_rule(valid_rule())
    rule = load_catalog(directory).get("dp901")
    assert (rule.id, rule.name, rule.severity, rule.tags) == (
        "DP901",
        "test-rule",
        Severity.WARNING,
        ("test",),
    )
    assert [(r.title, r.url) for r in rule.references] == [
        ("A reference", "https://example.org/ref")
    ]
    bad, good = rule.examples
    assert (bad.name, bad.expect, bad.pending) == ("bad", ("DP901",), False)
    assert bad.files == (("pkg/helper.py", ""), ("requirements.txt", "opacus==1.4.0\n"))
    assert bad.project_files()[0] == ("example.py", "x = 1\n")
    assert (good.name, good.expect, good.pending) == ("examples[1]", (), True)
    assert rule.help_uri is None
    assert (rule.what, rule.configuration) == ("It looks at x.", "Set `x`.")
    assert rule.minimal is not None
    flagged, use_instead = rule.minimal.flagged, rule.minimal.use_instead
    assert (flagged.code, flagged.expect, use_instead.expect) == ("x = 3  # flagged: here\n", ("DP901",), ())
    assert flagged.marked_lines() == (("example.py", 1),) and use_instead.marked_lines() == ()


def test_unknown_rule_suggests_the_closest_one() -> None:
    with pytest.raises(DpcheckError, match="did you mean DP104"):
        load_catalog().get("DP14")
    assert load_catalog().get("low-noise-shuffle").id == "DP104"


BAD_RULES = [
    pytest.param(
        'severity = "warning"',
        'severity = "warning"\nseverty = "error"',
        "severty: unknown key",
        id="unknown top-level key",
    ),
    pytest.param(
        'summary = "Something is wrong."\n',
        "",
        "summary: missing required key",
        id="missing summary",
    ),
    pytest.param(
        'severity = "warning"',
        'severity = "fatal"',
        "severity: 'fatal'",
        id="bad severity",
    ),
    pytest.param(
        'severity = "warning"',
        "severity = 2",
        "severity: must be a non-empty string",
        id="severity of wrong type",
    ),
    pytest.param(
        'name = "test-rule"',
        'name = "Test_Rule"',
        "name: 'Test_Rule' is not kebab-case",
        id="non-kebab name",
    ),
    pytest.param(
        'summary = "Something is wrong."',
        'summary = "  "',
        "summary: must be a non-empty string",
        id="empty summary",
    ),
    pytest.param(
        'summary = "Something is wrong."',
        'summary = "one\\ntwo"',
        "summary: must be a single line",
        id="multi-line summary",
    ),
    pytest.param(
        'id = "DP901"',
        'id = "X901"',
        "id: 'X901' is not of the form",
        id="malformed id",
    ),
    pytest.param(
        'id = "DP901"',
        'id = "DP902"',
        "id: 'DP902' does not match the file name 'DP901.toml'",
        id="id differs from file name",
    ),
    pytest.param(
        'tags = ["test"]',
        'tags = "test"',
        "tags: must be a list",
        id="tags not a list",
    ),
    pytest.param(
        'url = "https://example.org/ref"',
        "",
        "references[0].url: missing required key",
        id="reference without url",
    ),
    pytest.param(
        'url = "https://example.org/ref"',
        'url = "ftp://x"',
        "references[0].url: 'ftp://x' is not an http(s) URL",
        id="reference url not http",
    ),
    pytest.param(
        'name = "bad"',
        'name = "bad"\nexpected = []',
        "examples[0].expected: unknown key",
        id="example with unknown key",
    ),
    pytest.param(
        'code = "x = 1\\n"',
        "",
        "examples[0].code: missing required key",
        id="example without code",
    ),
    pytest.param(
        'code = "x = 1\\n"',
        "code = 3",
        "examples[0].code: must be a string",
        id="example code not a string",
    ),
    pytest.param(
        'expect = ["DP901"]',
        'expect = "DP901"',
        "examples[0].expect: must be a list",
        id="example expect not a list",
    ),
    pytest.param(
        'expect = ["DP901"]',
        'expect = ["DP901", "oops"]',
        "examples[0].expect[1]",
        id="example expect not a rule id",
    ),
    pytest.param(
        'expect = ["DP901"]',
        'expect = ["DP901", "DP999"]',
        "examples[0].expect: unknown rule id(s) DP999",
        id="example expects an unknown rule",
    ),
    pytest.param(
        'expect = ["DP901"]',
        'expect = ["DP901", "DP901"]',
        "examples[0].expect: lists a rule id twice",
        id="example expects a rule twice",
    ),
    pytest.param(
        '"pkg/helper.py"',
        '"../escape.py"',
        "examples[0].files: '../escape.py'",
        id="example file outside the project",
    ),
    pytest.param(
        '"pkg/helper.py"',
        '"/etc/passwd"',
        "examples[0].files: '/etc/passwd'",
        id="example file with absolute path",
    ),
    pytest.param(
        '"pkg/helper.py"',
        '"example.py"',
        "examples[0].files: 'example.py'",
        id="example file replacing example.py",
    ),
    pytest.param(
        '"pkg/helper.py" = ""',
        '"pkg/helper.py" = 1',
        "examples[0].files.pkg/helper.py: must be a string",
        id="example file content not a string",
    ),
    pytest.param(
        "pending = true",
        'pending = "yes"',
        "examples[1].pending: must be true or false",
        id="pending not a boolean",
    ),
    pytest.param(
        'expect = ["DP901"]',
        "expect = []",
        "examples: no example expects DP901",
        id="no failing example",
    ),
    pytest.param(
        "expect = []",
        'expect = ["DP901"]',
        "examples: every example expects DP901",
        id="no passing example",
    ),
    pytest.param(
        'severity = "warning"',
        "severity = ",
        "invalid TOML",
        id="invalid TOML",
    ),
    pytest.param('what = "It looks at x."\n', "", "what: missing required key", id="missing what"),
    pytest.param(
        'what = "It looks at x."',
        'what = "Something is wrong."',
        "what: repeats the summary",
        id="what repeats the summary",
    ),
    pytest.param(
        'configuration = "Set `x`."', "configuration = 1", "configuration: must be a string",
        id="configuration not a string",
    ),
    pytest.param("[minimal.flagged]", "[minimal.flagged_]", "minimal.flagged_: unknown key",
                 id="minimal with unknown key"),
    pytest.param('[minimal.use-instead]\ncode = "x = 4\\n"\nexpect = [ ]\n', "",
                 "minimal.use-instead: missing required key", id="minimal without use-instead"),
    pytest.param('expect = [ "DP901" ]', "expect = [ ]", "minimal.flagged.expect: must list DP901",
                 id="minimal flagged passes"),
    pytest.param("expect = [ ]", 'expect = [ "DP901" ]',
                 "minimal.use-instead.expect: must not list DP901", id="minimal use-instead fires"),
    pytest.param("  # flagged: here", "", "mark exactly one line with a `# flagged` comment (found 0)",
                 id="minimal flagged line not marked"),
    pytest.param('"x = 4\\n"', '"x = 4  # flagged\\n"', "minimal.use-instead: has a `# flagged` line",
                 id="minimal use-instead marked"),
    pytest.param('expect = [ "DP901" ]', 'expect = [ "DP901", "DP977" ]',
                 "minimal.flagged.expect: unknown rule id(s) DP977", id="minimal expects unknown rule"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD_RULES)
def test_each_kind_of_bad_rule_is_a_catalog_error_naming_file_and_key(
    write_rule: WriteRule, old: str, new: str, message: str
) -> None:
    text = valid_rule()
    assert old in text, "the mutation must apply to the template"
    directory = write_rule(text.replace(old, new, 1))
    with pytest.raises(CatalogError) as excinfo:
        load_catalog(directory)
    assert f"{directory / 'DP901.toml'}: " in str(excinfo.value)
    assert message in str(excinfo.value)


def test_duplicate_ids_are_rejected(write_rule: WriteRule) -> None:
    write_rule(valid_rule("DP901", "first-rule"))
    directory = write_rule(valid_rule("DP901", "second-rule"), filename="DP901 copy.toml")
    duplicate = r"DP901.toml: id: duplicate id 'DP901' \(already defined in .*DP901 copy.toml\)"
    with pytest.raises(CatalogError, match=duplicate):
        load_catalog(directory)


def test_duplicate_names_are_rejected(write_rule: WriteRule) -> None:
    write_rule(valid_rule("DP901", "same-name"))
    directory = write_rule(valid_rule("DP902", "same-name"), filename="DP902.toml")
    with pytest.raises(CatalogError, match=r"DP902.toml: name: duplicate name 'same-name'"):
        load_catalog(directory)


def test_examples_may_expect_other_rules_of_the_catalog(write_rule: WriteRule) -> None:
    write_rule(valid_rule("DP901", "first-rule").replace('expect = []', 'expect = ["DP902"]'))
    directory = write_rule(valid_rule("DP902", "second-rule"), filename="DP902.toml")
    assert load_catalog(directory).get("DP901").passing_examples[0].expect == ("DP902",)


def test_empty_and_missing_directories_are_errors(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("not a rule\n")
    with pytest.raises(CatalogError, match="holds no rule files"):
        load_catalog(tmp_path)
    with pytest.raises(CatalogError, match="does not exist"):
        load_catalog(tmp_path / "missing")


def test_undecodable_rule_file_is_an_error(write_rule: WriteRule) -> None:
    directory = write_rule("")
    (directory / "DP901.toml").write_bytes(b'id = "\xff\xfe"\n')
    with pytest.raises(CatalogError, match="DP901.toml: cannot read rule file"):
        load_catalog(directory)


def test_catalog_loads_from_a_zip_archive_as_in_a_zipped_install(tmp_path: Path) -> None:
    archive = tmp_path / "dpcheck.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for rule_file in sorted(REPO_RULES.glob("*.toml")):
            zf.write(rule_file, f"dpcheck/catalog/data/{rule_file.name}")
    with zipfile.ZipFile(archive) as zf:
        zipped = load_catalog(zipfile.Path(zf, "dpcheck/catalog/data/"))
    assert zipped == load_catalog()
