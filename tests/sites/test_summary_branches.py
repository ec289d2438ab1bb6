"""Summary shape added for the real-repository fixes: ``if`` arms, ``**`` arguments, ``yield``."""

from __future__ import annotations

from dpcheck.sites import summarize_source
from dpcheck.sites.ir import walk

SOURCE = '''
def run(opts):
    if opts.baseline:
        opts.sigma = 0.0
    else:
        sigma = opts.sigma
    main(**vars(opts))


class Sampler:
    def __iter__(self):
        yield torch.rand(self.n) < self.q
'''


def _stmts(scope: str) -> list[dict]:
    return summarize_source(SOURCE, "m.py")["scopes"][scope]["stmts"]


def test_statements_record_the_if_arm_they_sit_in() -> None:
    by_line = {s["line"]: s for s in _stmts("run")}
    assert by_line[4]["br"] == [[3, 0]]
    assert by_line[6]["br"] == [[3, 1]]
    assert "br" not in by_line[7]


def test_double_star_argument_is_kept() -> None:
    call = _stmts("run")[-1]["e"]
    assert call[3]["**"][0] == "call" and call[3]["**"][1] == ["r", "vars"]


def test_yield_keeps_its_expression() -> None:
    expr = _stmts("Sampler.__iter__")[0]["e"]
    assert any(n[0] == "call" and n[1] == ["r", "torch.rand"] for n in walk(expr))
