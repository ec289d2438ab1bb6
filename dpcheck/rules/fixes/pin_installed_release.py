"""DP105 ``pin-installed-release``: pin the DP library, in the dependency file that lists it, to
the release the installed copy and the API line the code calls agree on.

The release to pin is the installed one (the project's virtualenv first, then the environment
dpcheck runs in: ``dpcheck.discover.installed``), and only when it is one the pipeline's
classification already stands on: the exact release decided, or one of the span of releases of
the API line the code calls (``1.0.0-1.6.0``: every 1.x release normalizes this code alike), and
one the constraint written today allows. So the pin changes which release pip installs to the
one that runs, and never the update rule dpcheck found. A requirement given by URL or VCS ref
is a fork or a commit, not a release: no fix.

The edit keeps the file's own syntax (``dpcheck.rules.fixes.requirements``). Safe: the release
that runs is the one pinned. After the edit the pipeline's release must be the pinned one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from packaging.version import InvalidVersion, Version

from dpcheck.discover.confine import is_inside
from dpcheck.discover.pins import pins_of
from dpcheck.discover.requirement import Pin, Source
from dpcheck.model import Pipeline, Span
from dpcheck.rules.fixes.fix import FixDefinition, FixSite, NoFix, Outcome, Proposal, edit_between
from dpcheck.rules.fixes.requirements import pinned_line, pinned_setup_py, pinned_toml

LIBRARY = "opacus"


def propose(site: FixSite) -> Sequence[Proposal] | NoFix:
    pipeline, span = site.pipeline, site.finding.span
    if pipeline is None or not (pipeline.library or "").startswith(LIBRARY):
        return NoFix("its pipeline does not run Opacus")
    text = site.text(span.path)
    if text is None:
        return NoFix(f"{span.path} could not be read back as UTF-8 text")
    written = _written(site.root, span, text)
    if written is None:
        return NoFix(f"{span.path}:{span.line} holds no {LIBRARY} requirement dpcheck reads")
    if written.specifier.startswith("@") or "@" in written.raw.split("#")[0]:
        return NoFix(f"{LIBRARY} is required by URL or VCS ref ({written.raw!r}): a commit or a "
                     "fork, not a release")
    installed = site.installed(LIBRARY)
    if installed is None or installed.version is None:
        return NoFix(f"no installed {LIBRARY} to pin to: install the release you run, or pin it "
                     "by hand")
    version = installed.version
    disagreement = _disagreement(pipeline, written, version)
    if disagreement is not None:
        return NoFix(disagreement)
    new = pinned_file(span.path, text, span.line, version)
    if new is None:
        return NoFix(f"{span.path}:{span.line}: the requirement {written.raw!r} cannot be "
                     "rewritten without touching the rest of the file")
    where = "in the project" if is_inside(installed.path, site.root) else "where dpcheck runs"
    return [Proposal(edit_between(span.path, text, new),
                     f"pin {LIBRARY}=={version}, the release installed {where}",
                     check=lambda outcome: _pinned(outcome, version))]


def _written(root: Path, span: Span, text: str) -> Pin | None:
    """The requirement of the library on the finding's line, as the dependency file's reader
    reads it (its constraint as written)."""
    pins = pins_of(Source(root, root / span.path, text)).pins
    return next((p for p in pins if p.library == LIBRARY and p.span.line == span.line), None)


def _disagreement(pipeline: Pipeline, written: Pin, version: str) -> str | None:
    """Why ``version`` is not a release this pipeline's classification stands on, or not one
    the written constraint allows (None: it is both)."""
    release = pipeline.release
    if release is None:
        return ("no release to pin: the releases allowed normalize this code differently "
                "(the API line it calls does not decide)")
    low, _, high = release.partition("-")
    try:
        wanted, first, last = Version(version), Version(low), Version(high or low)
    except InvalidVersion:
        return f"the installed {LIBRARY} {version} is not a release dpcheck can compare"
    if not first <= Version(wanted.public) <= last:
        span = f"{low}–{high}" if high else low
        return (f"the installed {LIBRARY} {version} is not a release the classification stands "
                f"on ({span}): install one of those, or pin it by hand")
    if not written.allows(version):
        return (f"the installed {LIBRARY} {version} is outside the constraint written in the "
                f"file ({written.raw!r})")
    return None


def pinned_file(path: str, text: str, line: int, version: str) -> str | None:
    """The dependency file ``path`` with the library's requirement on ``line`` pinned, in the
    file's own syntax; None when there is nothing there to pin."""
    name = PurePosixPath(path).name
    if name == "pyproject.toml":
        return pinned_toml(text, line, LIBRARY, version, pipfile=False)
    if name == "Pipfile":
        return pinned_toml(text, line, LIBRARY, version, pipfile=True)
    if name == "setup.py":
        return pinned_setup_py(text, line, LIBRARY, version)
    return pinned_line(text, line, LIBRARY, version)


def _pinned(outcome: Outcome, version: str) -> str | None:
    """After the edit the pipeline's release must be the pinned one."""
    pipeline = outcome.pipeline
    if pipeline is None:
        return "the pipeline no longer forms after the edit"
    try:
        same = pipeline.release is not None and Version(pipeline.release) == Version(version)
    except InvalidVersion:
        same = False
    return None if same else (f"after the edit the release is {pipeline.release or 'undecided'}, "
                              f"not {version}")


FIX = FixDefinition("pin-installed-release", "DP105", propose)
