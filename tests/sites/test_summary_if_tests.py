"""The summary keeps each ``if`` test per scope (keyed by the ``if`` line), so a statement's arm
can be read as a condition, and boolean operations keep their operator."""

from __future__ import annotations

import json

from dpcheck.sites import SUMMARY_VERSION, summarize_source

SOURCE = '''
import torch

LIMIT = 3
if LIMIT > 2:
    LIMIT = 2


def train(loader, optimizer, k):
    for i, (x, y) in enumerate(loader):
        if (i + 1) % k != 0:
            optimizer.signal_skip_step()
        elif i == 7 or i > 9:
            print(i)
        optimizer.step()


class Optimizer:
    def scale(self, p):
        if self.loss_reduction == "mean" and not self.frozen:
            p.grad /= self.expected_batch_size


if __name__ == "__main__":
    train(None, None, 4)
'''


def _summary() -> dict:
    return summarize_source(SOURCE, "m.py")


def test_each_scope_keeps_its_if_tests_by_line() -> None:
    scopes = _summary()["scopes"]
    assert scopes["<module>"]["ifs"] == {"5": ["cmp", ">", ["r", "LIMIT"], ["n", 2]]}
    skip = scopes["train"]["ifs"]["11"]
    assert skip == ["cmp", "!=", ["b", "%", ["b", "+", ["r", "i"], ["n", 1]], ["r", "k"]],
                    ["n", 0]]
    assert set(scopes["train"]["ifs"]) == {"11", "13"}
    assert scopes["Optimizer"]["ifs"] == {}


def test_the_arm_of_a_statement_points_at_a_recorded_test() -> None:
    scope = _summary()["scopes"]["train"]
    by_line = {s["line"]: s for s in scope["stmts"]}
    assert by_line[12]["br"] == [[11, 0]]
    assert by_line[12]["src"] == "optimizer.signal_skip_step()"
    assert "src" not in by_line[14]
    assert by_line[14]["br"] == [[11, 1], [13, 0]]
    for line, _ in by_line[14]["br"]:
        assert str(line) in scope["ifs"]


def test_boolean_operations_keep_their_operator() -> None:
    scopes = _summary()["scopes"]
    either = scopes["train"]["ifs"]["13"]
    assert either[:2] == ["?", "or"]
    assert either[2] == ["cmp", "==", ["r", "i"], ["n", 7]]
    both = scopes["Optimizer.scale"]["ifs"]["20"]
    assert both[:2] == ["?", "and"]
    assert both[2] == ["cmp", "==", ["r", "self.loss_reduction"], ["s", "mean"]]
    assert both[3] == ["u", "not", ["r", "self.frozen"]]


def test_the_main_guard_is_not_kept_and_the_summary_is_json() -> None:
    summary = _summary()
    assert summary["version"] == SUMMARY_VERSION >= 5
    module_tests = summary["scopes"]["<module>"]["ifs"].values()
    assert all("__name__" not in json.dumps(test) for test in module_tests)
    assert json.loads(json.dumps(summary)) == summary
