"""The analysis cache: hits, misses, invalidation by content and settings, corruption."""

import json
from pathlib import Path

import pytest

import dpcheck.parse.cache as cache_module
from dpcheck.parse.cache import AnalysisCache, kept_in_memory


def test_roundtrip_and_invalidation(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path, "max=1")
    key = cache.key("abc", "train.py")
    assert cache.get(key) is None
    cache.put(key, {"summary": {"x": 1}})
    cache.save()

    warm = AnalysisCache(tmp_path, "max=1")
    assert warm.get(key) == {"summary": {"x": 1}}
    assert warm.get(cache.key("abd", "train.py")) is None  # other content
    assert warm.get(cache.key("abc", "other.py")) is None  # other path
    assert (warm.hits, warm.misses) == (1, 2)

    other_settings = AnalysisCache(tmp_path, "max=2")
    assert other_settings.get(key) is None
    assert (tmp_path / "CACHEDIR.TAG").exists()


def test_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path, "s")
    cache.put("k", 1)
    cache.save()
    (cache_file,) = tmp_path.rglob("*.json")
    cache_file.write_text("{not json")
    fresh = AnalysisCache(tmp_path, "s")
    assert fresh.get("k") is None
    fresh.put("k", 2)
    fresh.save()
    assert json.loads(cache_file.read_text()) == {"k": 2}


def test_disabled_cache_writes_nothing(tmp_path: Path) -> None:
    cache = AnalysisCache(None, "s")
    cache.put("k", 1)
    cache.save()
    assert cache.get("k") is None
    assert list(tmp_path.iterdir()) == []


def test_one_command_shares_a_memory_without_a_directory() -> None:
    """Within ``kept_in_memory`` (one command), caches without a directory see each other's
    entries, per settings namespace; nothing outlives the command."""
    with kept_in_memory():
        first = AnalysisCache(None, "s")
        first.put("k", {"summary": 1})
        first.bound_effects["p"] = {"severity": "info"}
        first.save()
        second = AnalysisCache(None, "s")
        assert second.get("k") == {"summary": 1}
        assert second.bound_effects.get("p") == {"severity": "info"}
        assert AnalysisCache(None, "other settings").get("k") is None
    assert AnalysisCache(None, "s").get("k") is None
    with kept_in_memory():
        assert AnalysisCache(None, "s").get("k") is None


def test_code_fingerprint_changes_with_a_catalog_outside_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a source checkout the rule catalog lives beside the package: a new or edited rule
    file must invalidate cached results (a cached scan once reported an unknown rule id)."""
    catalog = tmp_path / "rules"
    catalog.mkdir()
    (catalog / "DP900.toml").write_text('id = "DP900"\n', encoding="utf-8")
    monkeypatch.setattr(cache_module, "default_catalog_dir", lambda: catalog)
    cache_module.code_fingerprint.cache_clear()
    try:
        before = cache_module.code_fingerprint()
        (catalog / "DP901.toml").write_text('id = "DP901"\n', encoding="utf-8")
        cache_module.code_fingerprint.cache_clear()
        after = cache_module.code_fingerprint()
    finally:
        cache_module.code_fingerprint.cache_clear()
    assert before != after


def test_summaries_and_projects_are_read_entry_by_entry(tmp_path: Path) -> None:
    """The large stores keep one file per entry: a later scan reads the entries it asks for, a
    corrupt or foreign entry file is a miss, and only the newest projects are kept, searched by
    their linking context."""
    cache = AnalysisCache(tmp_path, "s")
    cache.put_summary("a.py", {"scopes": 1})
    cache.put_summary("b.py", {"scopes": 2})
    for number in range(cache_module._PROJECT_ENTRIES_KEPT + 2):
        cache.put_project(f"p{number}", {"n": number}, "ctx-even" if number % 2 == 0 else "ctx-odd")
    cache.save()

    warm = AnalysisCache(tmp_path, "s")
    assert warm.summary("b.py") == {"scopes": 2}
    assert warm.summary("c.py") is None
    newest = cache_module._PROJECT_ENTRIES_KEPT + 1
    assert [e["n"] for e in warm.recent_projects("ctx-odd")] == list(range(newest, 2, -2))
    assert warm.project("p0") is None and warm.project("p1") is None  # the two oldest dropped
    assert warm.project("p2") == {"n": 2}

    (shelf,) = tmp_path.rglob("*.summaries")
    files = {p.name: p for p in shelf.iterdir()}
    assert len(files) == 2
    a_file, b_file = sorted(files.values(), key=lambda p: "a.py" not in p.read_text())
    a_file.write_text("{not json")
    b_file.write_text(json.dumps({"key": "other.py", "value": {"scopes": 3}}))
    fresh = AnalysisCache(tmp_path, "s")
    assert fresh.summary("a.py") is None and fresh.summary("b.py") is None


def test_a_linked_shelf_folder_is_neither_read_nor_written(tmp_path: Path) -> None:
    """A shelf folder that is a symbolic link (planted in an untrusted checkout) is not used."""
    cache = AnalysisCache(tmp_path / "cache", "s")
    cache.put_summary("a.py", {"scopes": 1})
    cache.save()
    (shelf,) = (tmp_path / "cache").rglob("*.summaries")
    elsewhere = tmp_path / "elsewhere"
    shelf.rename(elsewhere)
    shelf.symlink_to(elsewhere, target_is_directory=True)
    linked = AnalysisCache(tmp_path / "cache", "s")
    assert linked.summary("a.py") is None
    linked.put_summary("b.py", {"scopes": 2})
    linked.save()
    assert len(list(elsewhere.iterdir())) == 1
