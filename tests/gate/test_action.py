"""The GitHub Action: its definition, and its scan step's script run for real with bash."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import git
import jsonschema
import pytest
import yaml

from tests.gate.conftest import ADD_SHUFFLE, DP101_FILE, DP101_LINE, edit

REPO_ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
SARIF_SCHEMA = REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"


def _step(name: str) -> dict:
    [step] = [s for s in ACTION["runs"]["steps"] if s["name"].startswith(name)]
    return step


def test_action_is_composite_with_the_gate_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert {"paths", "version", "args", "sarif-file", "fail-on", "new-since", "baseline"} <= set(inputs)
    assert inputs["new-since"]["default"] == "${{ github.event.pull_request.base.sha }}"
    assert inputs["fail-on"]["default"] == "error"
    upload = _step("Upload SARIF")
    assert upload["uses"] == "github/codeql-action/upload-sarif@v3"
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert _step("Install")["env"]["DPCHECK_SOURCE"] == "${{ github.action_path }}"


def test_scripts_take_inputs_from_the_environment_only() -> None:
    """No ``${{ }}`` inside a script: an input expanded there would be shell-injected."""
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


@pytest.fixture
def runner(tmp_path: Path) -> Path:
    """A bin folder whose ``dpcheck`` runs this checkout (what the install step provides)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "dpcheck"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO_ROOT}" exec "{sys.executable}" -m dpcheck "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _run_scan_step(project: Path, bin_dir: Path, **inputs: str) -> tuple[int, dict[str, str], dict, str]:
    """Run the Scan step's script as the runner would: (shell status, step outputs, SARIF, stdout)."""
    outputs = project.parent / "github_output"
    outputs.write_text("")
    sarif = project.parent / "dpcheck.sarif"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(outputs),
        "DPCHECK_PATHS": ".",
        "DPCHECK_ARGS": "",
        "DPCHECK_SARIF": str(sarif),
        "DPCHECK_FAIL_ON": "error",
        "DPCHECK_NEW_SINCE": "",
        "DPCHECK_BASELINE": "",
        **inputs,
    }
    proc = subprocess.run(
        ["bash", "-c", _step("Scan")["run"]], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )
    values = _outputs(outputs.read_text())
    report = json.loads(sarif.read_text()) if sarif.exists() else {}
    return proc.returncode, values, report, proc.stdout


def _outputs(text: str) -> dict[str, str]:
    """Step outputs as the runner reads $GITHUB_OUTPUT: ``k=v`` lines and ``k<<DELIM`` blocks."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            key, delimiter = line.split("<<", 1)
            values[key] = "\n".join(iter(lambda: next(lines), delimiter))
        else:
            key, _, value = line.partition("=")
            values[key] = value
    return values


def _sarif_rules(report: dict) -> list[str]:
    return sorted(r["ruleId"] for r in report["runs"][0]["results"])


def test_scan_step_on_a_push_reports_everything(gate_repo: Path, runner: Path) -> None:
    status, outputs, report, stdout = _run_scan_step(gate_repo, runner)
    assert status == 0  # the step itself never fails; "Fail on findings" does, after the upload
    assert outputs == {"sarif-written": "true", "exit-code": "1"}
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(report)
    assert _sarif_rules(report) == ["DP101"]
    assert f"::error file={DP101_FILE},line={DP101_LINE}" in stdout


def test_scan_step_on_a_pull_request_reports_only_new_findings(gate_repo: Path, runner: Path) -> None:
    base = git.Repo(gate_repo).head.commit.hexsha
    _, outputs, report, stdout = _run_scan_step(gate_repo, runner, DPCHECK_NEW_SINCE=base)
    assert outputs["exit-code"] == "0" and _sarif_rules(report) == [] and "::error" not in stdout
    edit(gate_repo / "cifar" / "train.py", *ADD_SHUFFLE)
    _, outputs, report, stdout = _run_scan_step(gate_repo, runner, DPCHECK_NEW_SINCE=base)
    assert outputs["exit-code"] == "1" and _sarif_rules(report) == ["DP102"]
    assert "::error file=cifar/train.py" in stdout and DP101_FILE not in stdout


def test_scan_step_passes_paths_args_and_fail_on(gate_repo: Path, runner: Path) -> None:
    _, outputs, report, _ = _run_scan_step(gate_repo, runner, DPCHECK_PATHS="cifar cifar/train.py")
    assert outputs["exit-code"] == "0" and _sarif_rules(report) == []
    _, outputs, report, _ = _run_scan_step(gate_repo, runner, DPCHECK_PATHS="asgm", DPCHECK_ARGS="--ignore DP101 --jobs 1")
    assert outputs["exit-code"] == "0" and _sarif_rules(report) == []
    _, outputs, report, _ = _run_scan_step(gate_repo, runner, DPCHECK_FAIL_ON="never")
    assert outputs["exit-code"] == "0" and _sarif_rules(report) == ["DP101"]


def test_scan_step_reads_args_and_paths_as_shell_words_over_several_lines(
    gate_repo: Path, runner: Path
) -> None:
    """Quotes are removed, not kept (`--param "sigma=1.3"` would otherwise be refused), every line
    counts, a comment is skipped, and a quoted path may hold a space."""
    (gate_repo / "asgm").rename(gate_repo / "asgm run")
    args = """--param "sigma=1.3"   # the noise multiplier the paper run used
        --param 'N=50000'
        --jobs 1 \\
        --ignore "DP105"
    """
    status, outputs, report, stdout = _run_scan_step(
        gate_repo, runner, DPCHECK_ARGS=args, DPCHECK_PATHS="'asgm run' cifar"
    )
    assert status == 0 and outputs["exit-code"] == "1", stdout
    (result,) = report["runs"][0]["results"]
    assert result["ruleId"] == "DP101"
    assert result["properties"]["bound"]["inputs"]["sigma"] == 1.3  # from the first line
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "asgm%20run/train_cifar.py"
    assert "::error file=asgm run/train_cifar.py,line=48" in stdout


def test_scan_step_rejects_unbalanced_quotes_with_a_message(gate_repo: Path, runner: Path) -> None:
    status, outputs, report, stdout = _run_scan_step(gate_repo, runner, DPCHECK_ARGS='--param "sigma=1.3')
    assert status == 0 and outputs["exit-code"] == "2" and report == {}
    assert outputs["message"] == "the args input is not valid shell words: No closing quotation"
    assert stdout.startswith("::error title=dpcheck::the args input is not valid shell words")


def test_scan_step_on_an_error_still_uploads_sarif_and_prints_annotations(
    gate_repo: Path, runner: Path
) -> None:
    status, outputs, report, stdout = _run_scan_step(gate_repo, runner, DPCHECK_NEW_SINCE="no-such-ref")
    assert status == 0  # the step itself never fails: the upload runs, then "Fail" fails
    assert outputs["exit-code"] == "2" and outputs["sarif-written"] == "true"
    message = outputs["message"]
    assert message.startswith("dpcheck: error: ") and "no-such-ref" in message
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_text())).validate(report)
    (run,) = report["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "no-such-ref" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    (annotation,) = stdout.splitlines()
    assert annotation.startswith("::error::") and "no-such-ref" in annotation


def test_fail_step_fails_with_the_scan_message() -> None:
    script = _step("Fail")["run"]
    env = {**os.environ, "DPCHECK_EXIT": "2", "DPCHECK_MESSAGE": "dpcheck: error: bad ref"}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "dpcheck: error: bad ref" in proc.stdout
    proc = subprocess.run(["bash", "-c", script], env={**env, "DPCHECK_EXIT": "1"},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "findings at or above fail-on" in proc.stdout


def test_documented_workflow_uses_existing_inputs_and_can_read_the_base() -> None:
    workflow = yaml.safe_load((REPO_ROOT / "docs" / "github-workflow.yml").read_text())
    [job] = workflow["jobs"].values()
    checkout, dpcheck = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    assert dpcheck["uses"].split("@")[0].endswith("/dpcheck")
    assert set(dpcheck["with"]) <= set(ACTION["inputs"])
    assert workflow["permissions"]["security-events"] == "write"
    assert {"pull_request", "push"} <= set(workflow[True])  # YAML 1.1 reads the key `on` as True
