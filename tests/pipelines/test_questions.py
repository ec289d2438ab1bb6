"""Linking work is polynomial and bounded: one memo, cycle guard and budget for every recursive
question (``dpcheck.pipelines.questions``), and a pipeline whose budget runs out is reported."""

from __future__ import annotations

from pathlib import Path

from dpcheck.model import Severity
from dpcheck.pipelines.build import PipelineBuilder
from dpcheck.pipelines.questions import Questions
from dpcheck.rules import evaluate
from tests.pipelines.builder import make_project

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _fixture_files(name: str) -> dict[str, str]:
    folder = FIXTURES / name
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())
            if p.suffix == ".py" or p.name == "requirements.txt"}


def test_a_question_is_answered_once_and_a_cycle_is_unknown() -> None:
    questions = Questions()
    calls: list[str] = []

    def ask(name: str) -> str | None:
        def answer() -> str | None:
            calls.append(name)
            if name == "a":
                return ask("b")
            if name == "b":
                inner = ask("a")  # a cycle: "a" is being answered
                return "b-saw-unknown" if inner is None else "b-saw-a"
            return name
        return questions.ask(name, answer, None)

    assert ask("a") == "b-saw-unknown"
    assert ask("a") == "b-saw-unknown"
    assert calls.count("a") == 1
    # "b" relied on "a" being open: asked afresh it is answered again (now seeing a's answer)
    assert ask("b") == "b-saw-a"
    assert calls.count("b") == 2
    ask("b")
    assert calls.count("b") == 2


def test_the_budget_counts_answers_and_exhaustion_is_unknown() -> None:
    questions = Questions(budget=3)
    answers = [questions.ask(i, lambda i=i: i * 10, -1) for i in range(5)]
    assert answers == [0, 10, 20, -1, -1]
    assert questions.exhausted
    questions.begin()
    assert not questions.exhausted and questions.ask(7, lambda: 70, -1) == 70


def _diamond_chain(length: int) -> dict[str, str]:
    """A training script whose dispatch option is passed down a chain of helpers where each
    helper calls the next two: the number of call paths grows like Fibonacci(length)."""
    lines = ["import torch", ""]
    for i in range(length):
        calls = [f"    step{j}(mode, x)" for j in (i + 1, i + 2) if j < length]
        lines += [f"def step{i}(mode, x):", "    if mode == 'dp':",
                  "        x = x + torch.randn_like(x)", *(calls or ["    return x"]), ""]
    lines += ["if __name__ == '__main__':", "    step0('dp', torch.zeros(3))", ""]
    return {"train.py": "\n".join(lines)}


def _questions_spent(root: Path, length: int) -> int:
    builder = PipelineBuilder(make_project(root, _diamond_chain(length)))
    builder.build()
    return builder.index.questions.spent


def test_linking_work_grows_polynomially_with_call_paths(tmp_path: Path) -> None:
    small = _questions_spent(tmp_path / "small", 12)
    large = _questions_spent(tmp_path / "large", 24)
    # 24 helpers have ~300x the call paths of 12; the questions answered grow with the helpers
    assert large <= 4 * small, (small, large)


def test_a_pipeline_over_budget_is_reported_not_silent(tmp_path: Path) -> None:
    files = _fixture_files("recursive_restart_args_sgm")
    project = make_project(tmp_path / "full", files)
    [full] = PipelineBuilder(project).build()
    assert full.incomplete is None and full.mechanism == "SGM"
    assert not evaluate([full], project)
    cut_project = make_project(tmp_path / "cut", files)
    [cut] = PipelineBuilder(cut_project, budget=0).build()
    assert cut.incomplete is not None and "analysis budget exhausted" in cut.incomplete
    assert cut.to_json()["incomplete"] == cut.incomplete
    [note] = evaluate([cut], cut_project)
    assert note.rule == "DP106" and note.severity == Severity.INFO
    assert "analysis budget exhausted" in note.message


def test_an_exhausted_budget_only_leaves_parts_undecided(tmp_path: Path) -> None:
    """Whatever the budget, a part is either decided right (ASGM, Poisson) or left unknown, and
    an incomplete pipeline always gets a finding."""
    files = _fixture_files("torch_loop_asgm_len_batch")
    budget = 0
    while True:
        project = make_project(tmp_path / str(budget), files)
        [pipeline] = PipelineBuilder(project, budget=budget).build()
        assert pipeline.mechanism in ("ASGM", "unknown")
        assert pipeline.sampling in ("poisson", "unknown")
        if pipeline.incomplete is None:
            assert (pipeline.mechanism, pipeline.sampling) == ("ASGM", "poisson")
            break
        assert evaluate([pipeline], project), budget
        budget = 2 * budget + 1
