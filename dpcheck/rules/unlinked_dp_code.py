"""DP107 unlinked-dp-code: DP code from which no complete pipeline could be formed.

An unlinked-code rule: it reads the DP code the pipeline stage saw but could not link into a
pipeline (``UnlinkedCode``: one per entry that formed none, with its markers and the parts it
could not link) and reports it once per file, merging what several entries left there: the
entry's own file when it holds a marker (anchored on the first one), else the file of the
entry's most specific marker (a helper module the script reaches). The markers are the
finding's evidence; a pipeline that formed is never this rule's subject (DP106 reports one whose
update rule or sampling stayed undecided).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.model import Evidence, Role, Span, UnlinkedCode
from dpcheck.project import Project
from dpcheck.rules.rule import Hit, UnlinkedRule

#: How each kind of marker is named in the message (a DP library by its title instead).
SEEN = {Role.CLIP: "per-example clipping", Role.PER_SAMPLE_GRAD: "per-example gradients",
        Role.NOISE: "Gaussian noise on gradients", Role.LIBRARY: "{libraries} used",
        Role.ACCOUNTANT: "an accountant call"}


@dataclass(frozen=True)
class UnlinkedDpCode(Hit):
    """The entries of one file that formed no pipeline, the markers seen in what they reach,
    the DP libraries they call into, and the parts of a DP-SGD pipeline that could not be
    linked."""

    entries: tuple[str, ...]
    markers: tuple[Evidence, ...]
    missing: tuple[str, ...]
    libraries: tuple[str, ...]

    def message(self) -> str:
        seen = ", ".join(
            f"{SEEN[role].format(libraries=' and '.join(self.libraries))} ({self._places(found)})"
            for role, found in self._by_role())
        missing = ", ".join(self.missing) if self.missing else "the update rule"
        return (f"DP code that dpcheck could not link into a training pipeline: {seen}; not "
                f"found or not linked: {missing}. No rule could check how this code divides, "
                "samples and accounts, so any privacy claim for it is unverified")

    def evidence(self) -> tuple[Evidence, ...]:
        return self.markers

    def _by_role(self) -> Iterator[tuple[Role, list[Evidence]]]:
        for role in SEEN:
            found = [e for e in self.markers if e.role == role]
            if found:
                yield role, found

    def _places(self, found: list[Evidence]) -> str:
        """Lines in the finding's own file, ``path:line`` elsewhere."""
        lines = [str(e.span.line) for e in found if e.span.path == self.span.path]
        places = [f"line{'s' if len(lines) > 1 else ''} {', '.join(lines)}"] if lines else []
        places.extend(f"{e.span.path}:{e.span.line}" for e in found
                      if e.span.path != self.span.path)
        return ", ".join(places)


def check(unlinked: tuple[UnlinkedCode, ...], project: Project) -> Iterator[UnlinkedDpCode]:
    by_path: dict[str, list[UnlinkedCode]] = {}
    for code in unlinked:
        by_path.setdefault(_home(code), []).append(code)
    for path, codes in sorted(by_path.items()):
        markers = tuple(dict.fromkeys(e for code in codes for e in code.markers))
        missing = tuple(dict.fromkeys(part for code in codes for part in code.missing))
        libraries = tuple(dict.fromkeys(title for code in codes for title in code.libraries))
        own = sorted((e.span for e in markers if e.span.path == path),
                     key=lambda span: (span.line, span.column))
        span = own[0] if own else Span(path, min(code.line for code in codes))
        yield UnlinkedDpCode(span, tuple(code.entry for code in codes), markers, missing,
                             libraries or ("a DP library",))


def _home(code: UnlinkedCode) -> str:
    """The file an entry's DP code is reported in: the entry's own file when it holds a marker
    (where the user runs the code), else the file of its first marker in the order of ``SEEN``
    (the DP code itself, in a module the entry reaches)."""
    if any(e.span.path == code.path for e in code.markers):
        return code.path
    ranked = sorted(code.markers, key=lambda e: list(SEEN).index(Role(e.role)))
    return ranked[0].span.path if ranked else code.path


RULE = UnlinkedRule("DP107", check)
