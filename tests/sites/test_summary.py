"""``summarize_source`` on real snippets: what the summary records, where, and that
it survives a JSON round trip (it is cached on disk as JSON)."""

from __future__ import annotations

import json
from textwrap import dedent


from dpcheck.sites import CANDIDATE_MARKERS, summarize_source
from dpcheck.sites.ir import walk

SOURCE = dedent(
    '''
    import argparse
    import numpy as np
    from opacus import PrivacyEngine as PE
    from .config import SIGMA
    from absl import flags

    flags.DEFINE_float("noise_multiplier", 1.1, "sigma")
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", "-b", type=int, default=256)
    parser.add_argument("--lr", dest="learning_rate", default=0.1)


    class Net:
        hidden = 128

        def __init__(self, width=64):
            self.fc = width * 2


    def step(grads, clip=1.0):
        for g, (a, b) in zip(grads, pairs):
            total = g + np.random.normal(0, SIGMA * clip, size=3) / len(grads)
        noisy = [x * 2 for x in grads]
        print(f"eps {engine.get_epsilon(1e-5)}")
        return total


    if __name__ == "__main__":
        step([1.0])
    '''
).lstrip()


def _summary() -> dict:
    return summarize_source(SOURCE, "pkg/train.py")


def test_summary_round_trips_through_json() -> None:
    summary = _summary()
    assert json.loads(json.dumps(summary)) == summary


def test_imports_keep_aliases_and_relative_levels() -> None:
    imports = _summary()["imports"]
    assert imports["np"] == "numpy"
    assert imports["PE"] == "opacus.PrivacyEngine"
    assert imports["SIGMA"] == ".config.SIGMA"
    assert imports["argparse"] == "argparse"


def test_options_record_dest_and_default() -> None:
    options = {o["dest"]: o for o in _summary()["argparse"]}
    assert options["batch_size"]["default"] == ["n", 256]
    assert options["batch_size"]["line"] == 9
    assert options["learning_rate"]["default"] == ["n", 0.1]
    assert options["noise_multiplier"]["default"] == ["n", 1.1]


def test_scopes_params_and_class_methods() -> None:
    scopes = _summary()["scopes"]
    assert scopes["step"]["params"] == [["grads", None], ["clip", ["n", 1.0]]]
    assert scopes["Net.__init__"]["class"] == "Net"
    assert scopes["Net"]["stmts"][0]["t"] == "hidden"
    assert [s["t"] for s in scopes["Net.__init__"]["stmts"]] == ["self.fc"]


def test_positions_are_one_based_and_columns_shifted() -> None:
    stmts = _summary()["scopes"]["step"]["stmts"]
    total = next(s for s in stmts if s["t"] == "total")
    line = SOURCE.splitlines()[total["line"] - 1]
    assert total["col"] == line.index("total") + 1
    call = next(n for n in _walk(total["e"]) if n[0] == "call" and n[1] == ["r", "np.random.normal"])
    assert call[4][:2] == [total["line"], line.index("np.random.normal") + 1]
    assert "src" in total and total["src"].startswith("total = g + np.random.normal")


def test_loops_nest_and_unpack_targets() -> None:
    stmts = _summary()["scopes"]["step"]["stmts"]
    loop = stmts[0]
    assert loop["k"] == "for" and loop["t"] == ["g", ["a", "b"]]
    body = stmts[1]
    assert (body["loop"], body["ld"]) == (0, 1)


def test_comprehensions_and_fstrings_keep_their_expressions() -> None:
    stmts = _summary()["scopes"]["step"]["stmts"]
    noisy = next(s for s in stmts if s["t"] == "noisy")
    assert noisy["e"][0] == "comp" and noisy["e"][2] == ["x"]
    printed = next(s for s in stmts if s["k"] == "expr")
    callees = [n[1] for n in _walk(printed["e"]) if n[0] == "call"]
    assert ["r", "engine.get_epsilon"] in callees


def test_main_block_is_recorded() -> None:
    summary = _summary()
    assert summary["has_main"] is True
    assert summary["scopes"]["<module>"]["stmts"][-1]["e"][1] == ["r", "step"]


def test_candidate_markers_reject_plain_code_and_accept_dp_code() -> None:
    assert not any(marker in "x = 1\ndef f(a):\n    return a + 1\n" for marker in CANDIDATE_MARKERS)
    assert any(marker in SOURCE for marker in CANDIDATE_MARKERS)


def _walk(ir: list) -> list[list]:
    return list(walk(ir))


def test_syntax_this_interpreter_cannot_read_gives_an_empty_summary() -> None:
    source = "def f[T](a: T) -> T:\n    return a\n"  # PEP 695: 3.12+ only
    try:
        compile(source, "x.py", "exec")
    except SyntaxError:
        summary = summarize_source(source, "x.py")
        assert "SyntaxError" in summary["unsupported"] and summary["scopes"]["<module>"]["stmts"] == []
    else:
        summary = summarize_source(source, "x.py")
        assert "f" in summary["scopes"]


def test_deep_expressions_are_truncated_and_too_deep_ones_reported() -> None:
    source = "x = " + " + ".join(["1"] * 200) + "\n"
    summary = summarize_source(source, "deep.py")
    [stmt] = summary["scopes"]["<module>"]["stmts"]
    assert stmt["t"] == "x" and ["?", "deep"] in list(walk(stmt["e"]))
    deeper = "y = " + "(" * 1000 + "1" + ")" * 1000 + "\n"
    summary = summarize_source(deeper, "deeper.py")
    assert summary["scopes"]["<module>"]["stmts"] or "unsupported" in summary
