"""The summary records, per scope, the names declared ``global`` (an assignment to one rebinds the
module name), and, per argparse option, its ``action=`` (a ``store_true`` flag without
``default=`` defaults to False)."""

from __future__ import annotations

import json

from dpcheck.sites import SUMMARY_VERSION, summarize_source

SOURCE = '''
import argparse

global microbatches
microbatches = 100

parser = argparse.ArgumentParser()
parser.add_argument("--plain", action="store_true")
parser.add_argument("--dense", action="store_false", default=None)
parser.add_argument("--sigma", type=float, default=1.0)
parser.add_argument("--mode", action=CHOSEN_ACTION)


def main():
    global microbatches, steps
    for step in range(10):
        global steps
        microbatches = len(chosen)

    def inner():
        global rate
        rate = 0.5


class Trainer:
    def fit(self):
        global microbatches
        return microbatches
'''


def _summary() -> dict:
    return summarize_source(SOURCE, "train.py")


def test_each_scope_lists_the_names_it_declares_global_once_in_order() -> None:
    scopes = _summary()["scopes"]
    assert scopes["main"]["globals"] == ["microbatches", "steps"]
    assert scopes["main.inner"]["globals"] == ["rate"]
    assert scopes["Trainer.fit"]["globals"] == ["microbatches"]
    assert scopes["Trainer"]["globals"] == []
    assert scopes["<module>"]["globals"] == ["microbatches"]


def test_an_option_entry_carries_its_literal_action() -> None:
    actions = {entry["dest"]: entry["action"] for entry in _summary()["argparse"]}
    assert actions == {"plain": "store_true", "dense": "store_false", "sigma": None,
                       "mode": None}


def test_the_new_fields_survive_the_json_cache_and_bump_the_version() -> None:
    summary = _summary()
    assert json.loads(json.dumps(summary)) == summary
    assert summary["version"] == SUMMARY_VERSION >= 6
