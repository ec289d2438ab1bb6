"""Re-run dpcheck on the corpus B repositories (bench/REAL_REPOS.md, "Corpus B") and compare with
the written expectations.

Usage::

    PYTHONPATH=. python bench/run_corpus_b.py [--corpus bench/corpus_b.toml] [--mirrors /work/.mirror]
        [--trees DIR] [--only NAME ...] [--timeout 300] [--json-out FILE] [--keep-trees DIR]

Every repository of ``bench/corpus_b.toml`` names a public repository and the commit its expected
findings were written for (by reading the code, before any scan). This script exports that commit
from a local bare mirror (``<mirrors>/<owner>+<name>/repo``, as the session's ``fetch`` tool leaves
it; blobs absent from the mirror are skipped and counted) into a scratch folder, or takes an
already extracted tree from ``--trees DIR/<owner>+<name>``. It then runs the installed dpcheck as a
separate process, ``python -m dpcheck scan . --format json --no-cache`` inside the tree, with a
wall-clock timeout (a timeout is a recorded result, not a crash of this script), and matches the
reported findings against the expectations:

* an expected finding matches a reported one with the same rule whose file equals an anchor's path
  (``fnmatch`` patterns allowed) and whose line is within ``--tolerance`` lines of the anchor's
  line (``*`` accepts any line); each reported finding matches at most one expectation
  (maximum bipartite matching);
* ``rule = "note"`` is the never-silent expectation: it matches any ``info`` finding of DP106 or of
  a rule outside DP001-DP105 (DP106 is the never-silent rule);
* a reported finding left over that matches an ``acceptable`` entry is right but not required;
  any other is a false positive. DP001 (unparsable file) is listed apart and kept out of the
  figures: it is a parser fact, not a classification.

Precision = (matched + acceptable) / reported; recall = matched / expected; both are also given
for error severity (an expected finding reported at a different severity is matched, and
listed as a severity mismatch; if it was reported as an error where info or warning is right it
also counts as an error-severity false positive) and for the expectations on the default
configuration only. Acceptances written after the first-contact run carry
``after_first_contact = true``; the strict precision counts the findings only they accept as
false positives. Nothing here is fetched: the mirrors must already be on disk. This is a
benchmark, not a test; the test suite never runs it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from dpcheck.toml import tomllib

RULES = frozenset({"DP101", "DP102", "DP103", "DP104", "DP105", "DP106", "note"})
SEVERITIES = frozenset({"error", "warning", "info"})
CLASSIFIED = frozenset({"DP001", "DP101", "DP102", "DP103", "DP104", "DP105"})
REPO_KEYS = {"name", "commit", "category", "paths", "reading", "not_expected", "expect", "acceptable"}
EXPECT_KEYS = {"rule", "severity", "anchors", "why", "default_config"}
ACCEPT_KEYS = {"rule", "anchors", "why", "after_first_contact"}


class CorpusError(Exception):
    """The corpus file (or a mirror it names) is not usable; the message names what and where."""


@dataclass(frozen=True)
class Anchor:
    """Where a finding may be reported: a path (``fnmatch`` pattern) and a line or any line."""

    path: str
    line: int | None

    @classmethod
    def parse(cls, text: str, where: str) -> Anchor:
        path, sep, line = text.rpartition(":")
        if not sep or not path:
            raise CorpusError(f"{where}: anchor {text!r} is not 'path:line' or 'path:*'")
        if line == "*":
            return cls(path, None)
        if not line.isdigit():
            raise CorpusError(f"{where}: anchor {text!r} has a line that is not a number or '*'")
        return cls(path, int(line))

    def accepts(self, path: str, line: int, tolerance: int) -> bool:
        if not fnmatch.fnmatchcase(path, self.path):
            return False
        return self.line is None or abs(line - self.line) <= tolerance


@dataclass(frozen=True)
class Expected:
    """One finding a correct dpcheck reports (``severity`` None for an acceptable one)."""

    rule: str
    anchors: tuple[Anchor, ...]
    why: str
    severity: str | None = None
    default_config: bool = True
    after_first_contact: bool = False

    def accepts(self, finding: Reported, tolerance: int) -> bool:
        if self.rule == "note":
            if finding.severity != "info" or (finding.rule in CLASSIFIED):
                return False
        elif finding.rule != self.rule:
            return False
        return any(a.accepts(finding.path, finding.line, tolerance) for a in self.anchors)

    def label(self) -> str:
        first = self.anchors[0]
        return f"{self.rule} {first.path}:{first.line if first.line is not None else '*'}"


@dataclass(frozen=True)
class Repo:
    """One corpus entry."""

    name: str
    commit: str
    category: str
    paths: tuple[str, ...]
    expect: tuple[Expected, ...]
    acceptable: tuple[Expected, ...]

    @property
    def mirror_name(self) -> str:
        return self.name.replace("/", "+")


@dataclass(frozen=True)
class Reported:
    """One finding as dpcheck's JSON report gives it."""

    rule: str
    severity: str
    path: str
    line: int
    message: str

    def label(self) -> str:
        return f"{self.rule}/{self.severity} {self.path}:{self.line}"


@dataclass
class RepoResult:
    """The comparison for one repository."""

    repo: Repo
    seconds: float
    status: str
    files: int = 0
    pipelines: int = 0
    missing_blobs: int = 0
    matched: list[tuple[Expected, Reported]] = field(default_factory=list)
    missed: list[Expected] = field(default_factory=list)
    acceptable: list[Reported] = field(default_factory=list)
    #: acceptable findings whose acceptance was only written after the first-contact run
    judged_late: list[Reported] = field(default_factory=list)
    false_positives: list[Reported] = field(default_factory=list)
    dp001: list[Reported] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- corpus file


def _require(table: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in table:
        raise CorpusError(f"{where}: missing key {key!r}")
    value = table[key]
    if not isinstance(value, kind):
        raise CorpusError(f"{where}: {key!r} must be {kind.__name__}, not {type(value).__name__}")
    return value


def _unknown_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise CorpusError(f"{where}: unknown key(s) {', '.join(extra)}")


def _expected(table: dict[str, Any], where: str, *, acceptable: bool) -> Expected:
    _unknown_keys(table, ACCEPT_KEYS if acceptable else EXPECT_KEYS, where)
    rule = _require(table, "rule", str, where)
    if rule not in RULES:
        raise CorpusError(f"{where}: rule {rule!r} is not one of {', '.join(sorted(RULES))}")
    anchors = _require(table, "anchors", list, where)
    if not anchors or not all(isinstance(a, str) for a in anchors):
        raise CorpusError(f"{where}: 'anchors' must be a non-empty list of 'path:line' strings")
    why = _require(table, "why", str, where)
    severity = None
    default_config = True
    late = table.get("after_first_contact", False)
    if not isinstance(late, bool):
        raise CorpusError(f"{where}: 'after_first_contact' must be true or false")
    if not acceptable:
        severity = _require(table, "severity", str, where)
        if severity not in SEVERITIES:
            raise CorpusError(f"{where}: severity {severity!r} is not error, warning or info")
        if rule == "note" and severity != "info":
            raise CorpusError(f"{where}: a never-silent note has severity info")
        default_config = table.get("default_config", True)
        if not isinstance(default_config, bool):
            raise CorpusError(f"{where}: 'default_config' must be true or false")
    return Expected(rule, tuple(Anchor.parse(a, where) for a in anchors), why, severity,
                    default_config, late)


def load_corpus(path: Path) -> list[Repo]:
    """Read and validate the corpus file; every problem is a ``CorpusError`` naming its place."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{path}: not valid TOML ({exc})") from None
    _unknown_keys(data, {"repo"}, str(path))
    entries = _require(data, "repo", list, str(path))
    repos: list[Repo] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{path}: repo[{i}]"
        if not isinstance(entry, dict):
            raise CorpusError(f"{where}: must be a table")
        _unknown_keys(entry, REPO_KEYS, where)
        name = _require(entry, "name", str, where)
        where = f"{path}: repo {name!r}"
        if name.count("/") != 1 or name in seen:
            raise CorpusError(f"{where}: name must be a unique 'owner/name'")
        seen.add(name)
        commit = _require(entry, "commit", str, where)
        if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
            raise CorpusError(f"{where}: commit must be 40 lowercase hex digits")
        _require(entry, "reading", str, where)
        paths = entry.get("paths", ["."])
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise CorpusError(f"{where}: 'paths' must be a non-empty list of strings")
        expect = tuple(_expected(t, f"{where} expect[{j}]", acceptable=False)
                       for j, t in enumerate(entry.get("expect", [])))
        accept = tuple(_expected(t, f"{where} acceptable[{j}]", acceptable=True)
                       for j, t in enumerate(entry.get("acceptable", [])))
        repos.append(Repo(name, commit, _require(entry, "category", str, where), tuple(paths),
                          expect, accept))
    return repos


# ---------------------------------------------------------------- trees


def mirror_gitdir(mirrors: Path, repo: Repo) -> Path:
    """The bare git directory of a repository's mirror (``repo`` or ``repo/.git``)."""
    base = mirrors / repo.mirror_name / "repo"
    gitdir = base / ".git" if (base / ".git").is_dir() else base
    if not (gitdir / "objects").is_dir():
        raise CorpusError(f"{repo.name}: no mirror at {base} (fetch it first; this script never fetches)")
    return gitdir


def export_tree(gitdir: Path, commit: str, target: Path) -> int:
    """Write the files of ``commit`` under ``target``; returns how many blobs the mirror lacks.

    The mirrors have no ``config`` file, which GitPython's ``Repo`` reads to tell a bare
    repository, so git is driven through ``GIT_DIR`` (one persistent ``cat-file --batch``)."""
    cmd = git.Git()
    cmd.update_environment(GIT_DIR=str(gitdir))
    try:
        listing = cmd.ls_tree("-r", "-z", "--full-tree", commit)
    except git.GitCommandError as exc:
        raise CorpusError(f"{gitdir}: commit {commit} is not in the mirror ({exc.stderr.strip()})") from None
    missing = 0
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        try:
            data = cmd.get_object_data(sha)[3]
        except (ValueError, git.GitCommandError):
            missing += 1
            continue
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return missing


# ---------------------------------------------------------------- scan and compare


def run_dpcheck(tree: Path, paths: Sequence[str], timeout: float) -> tuple[str, float, dict[str, Any] | None, str]:
    """Scan ``tree`` in a separate process: (status, seconds, report or None, stderr tail). The
    process imports the dpcheck this runner imported (``dpcheck_root``), whatever the venv holds:
    a relative ``PYTHONPATH`` would name the exported tree once the scan runs inside it, and the
    run would record one checkout's commit while another one scanned."""
    command = [sys.executable, "-m", "dpcheck", "scan", *paths, "--format", "json", "--no-cache"]
    env = {**os.environ, "PYTHONPATH": str(dpcheck_root())}
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=timeout,
                              check=False, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, None, ""
    seconds = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return f"no report (exit {done.returncode})", seconds, None, done.stderr[-2000:]
    return f"exit {done.returncode}", seconds, report, done.stderr[-2000:]


def _matching(expected: Sequence[Expected], reported: Sequence[Reported], tolerance: int) -> dict[int, int]:
    """Maximum one-to-one matching expected -> reported (augmenting paths)."""
    edges = [[j for j, f in enumerate(reported) if e.accepts(f, tolerance)] for e in expected]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def compare(repo: Repo, report: dict[str, Any], tolerance: int, result: RepoResult) -> None:
    """Fill ``result`` with the matches, misses, acceptable findings and false positives."""
    findings = [Reported(f["rule"], f["severity"], f["path"], int(f["line"]), f["message"])
                for f in report.get("findings", [])]
    result.files = int(report.get("files_scanned", 0))
    result.pipelines = len(report.get("pipelines", []))
    result.errors = [f"{e.get('path')}: {e.get('message')}" for e in report.get("errors", [])]
    result.dp001 = [f for f in findings if f.rule == "DP001"]
    judged = [f for f in findings if f.rule != "DP001"]
    pairs = _matching(repo.expect, judged, tolerance)
    used = set(pairs.values())
    result.matched = [(repo.expect[i], judged[j]) for i, j in sorted(pairs.items())]
    result.missed = [e for i, e in enumerate(repo.expect) if i not in pairs]
    for j, finding in enumerate(judged):
        if j in used:
            continue
        accepting = [a for a in repo.acceptable if a.accepts(finding, tolerance)]
        if accepting:
            result.acceptable.append(finding)
            if all(a.after_first_contact for a in accepting):
                result.judged_late.append(finding)
        else:
            result.false_positives.append(finding)


def evaluate(repo: Repo, tree: Path, timeout: float, tolerance: int, missing: int) -> RepoResult:
    status, seconds, report, stderr = run_dpcheck(tree, repo.paths, timeout)
    result = RepoResult(repo, seconds, status, missing_blobs=missing)
    if report is None:
        result.missed = list(repo.expect)
        if stderr:
            result.errors = [stderr.strip().splitlines()[-1]]
        return result
    compare(repo, report, tolerance, result)
    return result


# ---------------------------------------------------------------- figures and output


@dataclass(frozen=True)
class Figures:
    """Counts over a set of results: ``correct`` reported findings are the matched ones (at an
    acceptable severity, for the error figures) plus the acceptable ones."""

    expected: int
    matched: int
    reported: int
    correct: int

    @property
    def false_positives(self) -> int:
        return self.reported - self.correct

    @property
    def precision(self) -> float | None:
        return self.correct / self.reported if self.reported else None

    @property
    def recall(self) -> float | None:
        return self.matched / self.expected if self.expected else None


def _severity_too_high(expected: Expected, finding: Reported) -> bool:
    order = {"info": 0, "warning": 1, "error": 2}
    return expected.severity is not None and order[finding.severity] > order[expected.severity]


def figures(results: Iterable[RepoResult], *, errors_only: bool = False,
            default_only: bool = False, strict: bool = False) -> Figures:
    """Overall figures; with ``errors_only`` the expected errors against the reported errors (an
    expected error counts as found only when reported as an error; a finding reported as an
    error where a lower severity is right is an error-severity false positive); with
    ``default_only`` only the expectations on the default configuration; with ``strict`` the
    findings accepted only after the first-contact run count as false positives."""
    expected = matched = reported = correct = 0
    for r in results:
        keep = [e for e in r.repo.expect
                if (not errors_only or e.severity == "error") and (not default_only or e.default_config)]
        expected += len(keep)
        if errors_only:
            matched += sum(1 for e, f in r.matched if e in keep and f.severity == "error")
            reported += sum(1 for f in [*(f for _, f in r.matched), *r.acceptable, *r.false_positives]
                            if f.severity == "error")
            correct += sum(1 for e, f in r.matched if f.severity == "error" and not _severity_too_high(e, f))
            correct += sum(1 for f in r.acceptable if f.severity == "error"
                           and not (strict and f in r.judged_late))
        else:
            matched += sum(1 for e, _ in r.matched if e in keep)
            reported += len(r.matched) + len(r.acceptable) + len(r.false_positives)
            correct += len(r.matched) + len(r.acceptable) - (len(r.judged_late) if strict else 0)
    return Figures(expected, matched, reported, correct)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def summary(results: Sequence[RepoResult]) -> str:
    overall = figures(results)
    errors = figures(results, errors_only=True)
    default = figures(results, default_only=True)
    strict = figures(results, strict=True)
    lines = [
        f"repositories: {len(results)}; expected findings: {overall.expected} "
        f"({default.expected} on the default configuration)",
        f"overall: matched {overall.matched}/{overall.expected} (recall {_pct(overall.recall)}); "
        f"reported {overall.reported}: {overall.correct} right (expected or acceptable), "
        f"{overall.false_positives} false positive(s) (precision {_pct(overall.precision)})",
        f"error severity: matched {errors.matched}/{errors.expected} (recall {_pct(errors.recall)}); "
        f"reported errors {errors.reported}, false positives {errors.false_positives} "
        f"(precision {_pct(errors.precision)})",
        f"default configuration only: recall {default.matched}/{default.expected} ({_pct(default.recall)})",
        f"strict (acceptances written after the first-contact run counted as false positives): "
        f"precision {strict.correct}/{strict.reported} ({_pct(strict.precision)})",
        f"timeouts: {sum(r.status == 'timeout' for r in results)}; scans without a report: "
        f"{sum(r.status.startswith('no report') for r in results)}; "
        f"total scan time {sum(r.seconds for r in results):.1f} s",
    ]
    return "\n".join(lines)


def table(results: Sequence[RepoResult]) -> str:
    rows = ["| repository | commit | status | s | files | pipelines | expected | matched | acceptable | FP | DP001 |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        fps = ", ".join(f.label() for f in r.false_positives) or "0"
        rows.append(f"| {r.repo.name} | {r.repo.commit[:10]} | {r.status} | {r.seconds:.1f} | {r.files} "
                    f"| {r.pipelines} | {len(r.repo.expect)} | {len(r.matched)} | {len(r.acceptable)} "
                    f"| {fps} | {len(r.dp001)} |")
    return "\n".join(rows)


def details(r: RepoResult) -> str:
    out = [f"### {r.repo.name} ({r.status}, {r.seconds:.1f} s)"]
    out += [f"* matched: {e.label()} <- {f.label()}"
            + (" (severity differs)" if e.severity != f.severity else "") for e, f in r.matched]
    out += [f"* MISSED: {e.label()} ({e.severity}): {e.why}" for e in r.missed]
    out += [f"* acceptable{' (judged after first contact)' if f in r.judged_late else ''}: "
            f"{f.label()}: {f.message}" for f in r.acceptable]
    out += [f"* FALSE POSITIVE: {f.label()}: {f.message}" for f in r.false_positives]
    out += [f"* scan error: {e}" for e in r.errors]
    if r.missing_blobs:
        out.append(f"* {r.missing_blobs} blob(s) absent from the mirror were not exported")
    return "\n".join(out)


def to_json(results: Sequence[RepoResult], dpcheck_commit: str) -> dict[str, Any]:
    def finding(f: Reported) -> dict[str, Any]:
        return {"rule": f.rule, "severity": f.severity, "path": f.path, "line": f.line,
                "message": f.message}

    return {
        "dpcheck_commit": dpcheck_commit,
        "repos": [{
            "name": r.repo.name, "commit": r.repo.commit, "status": r.status,
            "seconds": round(r.seconds, 2), "files": r.files, "pipelines": r.pipelines,
            "missing_blobs": r.missing_blobs,
            "matched": [{"expected": e.label(), "reported": finding(f)} for e, f in r.matched],
            "missed": [e.label() for e in r.missed],
            "acceptable": [finding(f) for f in r.acceptable],
            "judged_after_first_contact": [finding(f) for f in r.judged_late],
            "false_positives": [finding(f) for f in r.false_positives],
            "dp001": len(r.dp001), "errors": r.errors,
        } for r in results],
    }


def dpcheck_root() -> Path:
    """The checkout (or install) root of the dpcheck package this runner imports."""
    import dpcheck

    return Path(dpcheck.__file__).resolve().parent.parent


def dpcheck_commit() -> str:
    """The last commit of the imported dpcheck checkout that changed the analyser (``dpcheck/``,
    ``rules/``, ``pyproject.toml``), ``+dirty`` when those have uncommitted edits."""
    root = dpcheck_root()
    try:
        repo = git.Repo(root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return "unknown (not a git checkout)"
    scope = ["dpcheck", "rules", "pyproject.toml"]
    last = repo.git.log("-1", "--format=%H", "--", *scope)
    dirty = "+dirty" if any(repo.is_dirty(path=p) for p in scope) else ""
    return last + dirty


# ---------------------------------------------------------------- main


def tree_of(repo: Repo, args: argparse.Namespace, scratch: Path) -> tuple[Path, int]:
    """The tree to scan (an extracted one, or a fresh export) and the blobs the export lacked."""
    if args.trees is not None:
        tree = args.trees / repo.mirror_name
        if not tree.is_dir():
            raise CorpusError(f"{repo.name}: no extracted tree at {tree}")
        return tree, 0
    tree = scratch / repo.mirror_name
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    return tree, export_tree(mirror_gitdir(args.mirrors, repo), repo.commit, tree)


def run_all(repos: Sequence[Repo], args: argparse.Namespace) -> list[RepoResult]:
    """Scan and compare every repository; temporary exports are removed whatever happens."""
    scratch = args.keep_trees or Path(tempfile.mkdtemp(prefix="corpus_b_"))
    results: list[RepoResult] = []
    try:
        for repo in repos:
            tree, missing = tree_of(repo, args, scratch)
            result = evaluate(repo, tree, args.timeout, args.tolerance, missing)
            results.append(result)
            print(f"{repo.name}: {result.status}, {result.seconds:.1f} s, matched "
                  f"{len(result.matched)}/{len(repo.expect)}, FP {len(result.false_positives)}",
                  file=sys.stderr, flush=True)
    finally:
        if args.keep_trees is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).with_name("corpus_b.toml"))
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                        help="folder of <owner>+<name>/repo bare mirrors (default /work/.mirror)")
    parser.add_argument("--trees", type=Path, help="use extracted trees DIR/<owner>+<name> instead")
    parser.add_argument("--keep-trees", type=Path, help="export into DIR and keep the trees")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME", help="owner/name to run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per scan (default 300)")
    parser.add_argument("--tolerance", type=int, default=3, help="anchor line tolerance (default 3)")
    parser.add_argument("--json-out", type=Path, help="write the comparison as JSON to FILE")
    args = parser.parse_args(argv)
    try:
        repos = load_corpus(args.corpus)
        if args.only:
            unknown = sorted(set(args.only) - {r.name for r in repos})
            if unknown:
                raise CorpusError(f"--only: not in the corpus: {', '.join(unknown)}")
            repos = [r for r in repos if r.name in args.only]
        results = run_all(repos, args)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    commit = dpcheck_commit()
    print(f"dpcheck commit: {commit}\n")
    print(summary(results), end="\n\n")
    print(table(results), end="\n\n")
    for r in results:
        print(details(r), end="\n\n")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps(to_json(results, commit), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
