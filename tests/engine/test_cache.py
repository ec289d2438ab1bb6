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
