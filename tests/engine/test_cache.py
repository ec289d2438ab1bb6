"""The analysis cache: hits, misses, invalidation by content and settings, corruption."""

import json
from pathlib import Path

from dpcheck.parse.cache import AnalysisCache


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
