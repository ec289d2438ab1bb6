"""The result model every stage shares: spans, evidence, parameters, pipelines, findings.

Everything here is plain data (dataclasses) with a ``to_json`` that gives the documented JSON
shape; the report renderers, the cache and the baseline all go through these shapes, so the
JSON contract lives in one place.

It is over 500 lines for that reason: one JSON contract, one module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dpcheck.locations import CellLayout, place_in_cells

PARAM_NAMES: tuple[str, ...] = (
    "sigma",
    "clip",
    "batch_size",
    "N",
    "q",
    "epochs",
    "steps",
    "delta",
    "target_epsilon",
    "dim",
)


class Vocabulary(str, Enum):
    """A closed vocabulary whose members are their JSON strings: they compare, hash, format and
    serialize exactly as the plain strings did, so using them changes no output."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Mechanism(Vocabulary):
    """The update rule of a pipeline (docs/theory.md#update-rules)."""

    SGM = "SGM"
    ASGM = "ASGM"
    EASGM = "EASGM"
    FEASGM = "FEASGM"
    #: Normalized, kind undecided: the divisor is a size of the private data that is the
    #: sampled batch (ASGM) or the dataset (EASGM), and the code does not say which
    #: (docs/theory.md#undecided-normalization).
    ASGM_OR_EASGM = "ASGM|EASGM"
    FIXED_MEAN = "fixed-mean"
    UNKNOWN = "unknown"

    @property
    def normalized(self) -> bool:
        """Whether the noisy sum is divided by a data-dependent batch size."""
        return self in (Mechanism.ASGM, Mechanism.EASGM, Mechanism.FEASGM,
                        Mechanism.ASGM_OR_EASGM)


class SamplingKind(Vocabulary):
    """How a pipeline draws its batches, coarsely: ``shuffle`` is any fixed batch size
    (``Pipeline.sampler`` names the scheme, a kind of ``dpcheck/data/samplers.json``)."""

    POISSON = "poisson"
    SHUFFLE = "shuffle"
    BALLS_AND_BINS = "balls-and-bins"
    UNKNOWN = "unknown"


class Assumption(Vocabulary):
    """What an accountant assumes about the mechanism it accounts."""

    SGM_POISSON = "SGM+poisson"
    SGM_WITHOUT_REPLACEMENT = "SGM+without-replacement"
    #: The unnormalized SGM with no one sampling assumed: the accountant states a guarantee for
    #: Poisson sampling and one for each example used once per epoch (shuffled or sequential
    #: batches), as TF-Privacy's ``compute_dp_sgd_privacy_statement`` does.
    SGM_ANY_SAMPLING = "SGM"
    UNKNOWN = "unknown"

    @property
    def sgm(self) -> bool:
        """Whether the accountant assumes the (unnormalized) Subsampled Gaussian Mechanism."""
        return self in (Assumption.SGM_POISSON, Assumption.SGM_WITHOUT_REPLACEMENT,
                        Assumption.SGM_ANY_SAMPLING)


class Role(Vocabulary):
    """What a piece of pipeline evidence is. ``param:<name>`` roles (one per resolved parameter)
    are built from the parameter's name and are not members."""

    UPDATE = "update"
    DIVISOR = "divisor"
    NOISE = "noise"
    CLIP = "clip"
    PER_SAMPLE_GRAD = "per-sample-grad"
    SAMPLER = "sampler"
    SHUFFLE_BUFFER = "shuffle-buffer"
    ACCOUNTANT = "accountant"
    ACCOUNTANT_Q = "accountant:q"
    ACCOUNTANT_STEPS = "accountant:steps"
    ACCUMULATION = "accumulation"
    DISPATCH = "dispatch"
    LIBRARY = "library"


MECHANISMS: tuple[str, ...] = tuple(m.value for m in Mechanism)
SAMPLINGS: tuple[str, ...] = tuple(s.value for s in SamplingKind)


class Severity(str, Enum):
    """How serious a finding is; ``--fail-on`` compares against this order."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Position in the order info < warning < error."""
        return ("info", "warning", "error").index(self.value)


@dataclass(frozen=True, order=True)
class Span:
    """A source region. ``path`` is POSIX, relative to the scan root; line and column are 1-based.
    In a notebook they count in the module its code cells make; ``dpcheck.locations`` places
    them in a cell for the reader."""

    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Span:
        return cls(
            data["path"], data["line"], data["column"], data.get("end_line"), data.get("end_column")
        )


@dataclass(frozen=True)
class Evidence:
    """One site that supports a classification: what it is (``role``), where, and why it counts.

    Pipeline evidence roles are the ``Role`` members and ``param:<name>``; rules compare roles
    with ``Role`` members, never with string literals.
    """

    role: str
    span: Span
    note: str

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, **self.span.to_json(), "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(data["role"], Span.from_json(data), data["note"])


@dataclass(frozen=True)
class ParamValue:
    """A statically resolved training parameter with its provenance.

    ``value`` is None when the parameter was seen but could not be resolved; ``source`` says how
    it was obtained (``literal``, ``constant``, ``argparse-default``, ``config``, ``dataset-size``,
    ``derived``, ``model-size``, ``override``; ``lowest-over-runs`` for a noise multiplier that
    differs between the runs the callers make, which is the lowest of them).
    """

    name: str
    value: float | int | None
    source: str
    span: Span | None = None
    expression: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "source": self.source,
            "span": self.span.to_json() if self.span else None,
            "expression": self.expression,
        }

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> ParamValue:
        span = Span.from_json(data["span"]) if data.get("span") else None
        return cls(name, data["value"], data["source"], span, data.get("expression"))


@dataclass(frozen=True)
class Accountant:
    """The privacy accountant a pipeline reports its epsilon with, and what it assumes.

    ``name`` e.g. ``opacus-rdp``, ``opacus-prv``, ``opacus-gdp``, ``tf-privacy-rdp``,
    ``dp-accounting-pld``, ``dp-accounting-rdp``, ``prv-accountant``, ``autodp``, ``custom``,
    ``none``. ``assumes`` accepts an ``Assumption`` string and holds the member.
    ``q`` and ``steps`` are what the accountant was given (for DP103).
    """

    name: str
    assumes: Assumption
    span: Span | None = None
    q: ParamValue | None = None
    steps: ParamValue | None = None
    sigma: ParamValue | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "assumes", Assumption(self.assumes))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "assumes": self.assumes.value,
            "span": self.span.to_json() if self.span else None,
            "q": self.q.to_json() if self.q else None,
            "steps": self.steps.to_json() if self.steps else None,
            "sigma": self.sigma.to_json() if self.sigma else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Accountant:
        def param(name: str) -> ParamValue | None:
            return ParamValue.from_json(name, data[name]) if data.get(name) else None

        span = Span.from_json(data["span"]) if data.get("span") else None
        return cls(data["name"], data["assumes"], span, param("q"), param("steps"), param("sigma"))


NO_ACCOUNTANT = Accountant(name="none", assumes=Assumption.UNKNOWN)


@dataclass(frozen=True)
class Undecided:
    """Why a pipeline's update rule stayed ``unknown``, and where that was decided."""

    span: Span
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, **self.span.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Undecided:
        return cls(Span.from_json(data), data["reason"])


@dataclass(frozen=True)
class Pipeline:
    """One training entry point with its linked sites, classification and parameters.

    ``mechanism`` and ``sampling`` accept their vocabulary's strings and hold enum members.
    ``undecided`` says why the mechanism is ``unknown`` (None when it is decided).
    ``release`` is the DP library release whose behaviour classified the pipeline: an exact
    version, or the span of releases of the API line the code calls (``1.0.0-1.6.0``) when no
    pin decides but all of them behave alike; None when no release decided it.
    ``release_reason`` says how the release was decided, or why it could not be (None for a
    pipeline that uses no versioned DP library). ``incomplete`` says why the analysis of the
    pipeline stopped before it was complete (its work budget ran out: what was decided holds,
    the rest is undecided); None when it completed.
    ``sampler`` is the batch sampler's kind (``shuffle``, ``sequential``, ``fixed-subsets``, ...
    see ``dpcheck/data/samplers.json``; ``unknown`` when undecided): ``sampling`` is its coarse
    class.
    """

    entry: str
    path: str
    line: int
    mechanism: Mechanism
    sampling: SamplingKind
    accountant: Accountant = NO_ACCOUNTANT
    params: dict[str, ParamValue] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    library: str | None = None
    release: str | None = None
    undecided: Undecided | None = None
    release_reason: str | None = None
    incomplete: str | None = None
    sampler: str = "unknown"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanism", Mechanism(self.mechanism))
        object.__setattr__(self, "sampling", SamplingKind(self.sampling))

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "path": self.path,
            "line": self.line,
            "mechanism": self.mechanism.value,
            "sampling": self.sampling.value,
            "sampler": self.sampler,
            "accountant": self.accountant.to_json(),
            "params": {k: v.to_json() for k, v in sorted(self.params.items())},
            "evidence": [e.to_json() for e in self.evidence],
            "library": self.library,
            "release": self.release,
            "undecided": self.undecided.to_json() if self.undecided else None,
            "release_reason": self.release_reason,
            "incomplete": self.incomplete,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pipeline:
        return cls(
            entry=data["entry"],
            path=data["path"],
            line=data["line"],
            mechanism=data["mechanism"],
            sampling=data["sampling"],
            accountant=Accountant.from_json(data["accountant"]),
            params={k: ParamValue.from_json(k, v) for k, v in data["params"].items()},
            evidence=tuple(Evidence.from_json(e) for e in data["evidence"]),
            library=data.get("library"),
            release=data.get("release"),
            undecided=Undecided.from_json(data["undecided"]) if data.get("undecided") else None,
            release_reason=data.get("release_reason"),
            incomplete=data.get("incomplete"),
            sampler=data.get("sampler", "unknown"),
        )


@dataclass(frozen=True)
class UnlinkedCode:
    """DP code the pipeline stage saw but could not link into a complete pipeline: the entry
    whose reach holds it (a script, or the outermost project function that runs it), where
    that entry is, the DP markers seen (``markers``: evidence with ``Role`` roles, in the
    entry's reach and in no formed pipeline's), the DP libraries it calls into (``libraries``,
    by title) and the parts of a DP-SGD pipeline it could not link (``missing``, in words:
    "per-example clipping", "an accountant", ...)."""

    entry: str
    path: str
    line: int
    markers: tuple[Evidence, ...]
    missing: tuple[str, ...]
    libraries: tuple[str, ...] = ()


@dataclass(frozen=True)
class TextEdit:
    """Replace the text of ``span`` (1-based lines and character columns, the end exclusive;
    an empty span inserts) by ``content``."""

    span: Span
    content: str

    def to_json(self) -> dict[str, Any]:
        return {**self.span.to_json(), "content": self.content}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextEdit:
        return cls(Span.from_json(data), data["content"])


@dataclass(frozen=True)
class FindingFix:
    """An automatic fix of a finding, verified by re-analysing the project with its edits (see
    ``dpcheck.fixing``): the catalog fix ``id`` and ``title``, its ``safety`` (``safe``, or
    ``unsafe``: applied only with ``--unsafe-fixes``), what the edits do (``message``), the
    ``edits`` and a ``note`` on the fixed project the user must hear (None: none)."""

    id: str
    title: str
    safety: str
    message: str
    edits: tuple[TextEdit, ...]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "safety": self.safety,
            "message": self.message,
            "edits": [e.to_json() for e in self.edits],
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FindingFix:
        return cls(data["id"], data["title"], data["safety"], data["message"],
                   tuple(TextEdit.from_json(e) for e in data["edits"]), data.get("note"))


@dataclass(frozen=True)
class Finding:
    """A rule violated at a place. ``context`` is the stripped source text of the anchor line; it
    makes the fingerprint stable when lines shift. ``fix`` is the automatic fix verified for it
    (None: none); ``fix_reason`` says why a rule that has fixes offers none here."""

    rule: str
    severity: Severity
    span: Span
    message: str
    pipeline: str | None = None
    evidence: tuple[Evidence, ...] = ()
    bound: dict[str, Any] | None = None
    context: str = ""
    fix: FindingFix | None = None
    fix_reason: str | None = None

    @property
    def fingerprint(self) -> str:
        """Stable identity across runs and unrelated edits: rule, file, pipeline, anchor text.
        A file name that is not UTF-8 hashes by its undecodable bytes (kept as surrogates)."""
        key = "\x1f".join(
            (self.rule, self.span.path, self.pipeline or "", " ".join(self.context.split()))
        )
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.path, self.span.line, self.span.column, self.rule)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "path": self.span.path,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "message": self.message,
            "pipeline": self.pipeline,
            "evidence": [e.to_json() for e in self.evidence],
            "bound": self.bound,
            "fingerprint": self.fingerprint,
            "context": self.context,
            "fix": self.fix.to_json() if self.fix else None,
            "fix_reason": self.fix_reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(
            rule=data["rule"],
            severity=Severity(data["severity"]),
            span=Span(data["path"], data["line"], data["column"], data.get("end_line"), data.get("end_column")),
            message=data["message"],
            pipeline=data.get("pipeline"),
            evidence=tuple(Evidence.from_json(e) for e in data["evidence"]),
            bound=data.get("bound"),
            context=data.get("context", ""),
            fix=FindingFix.from_json(data["fix"]) if data.get("fix") else None,
            fix_reason=data.get("fix_reason"),
        )


@dataclass(frozen=True)
class ScanError:
    """A problem that is not a finding: bad input (an unreadable path, a malformed dependency
    file) or, with ``internal``, a dpcheck bug met on one file (exit code 2, results kept)."""

    path: str
    message: str
    internal: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "message": self.message, "internal": self.internal}


@dataclass
class ScanResult:
    """Everything a scan produced; the single input of every report renderer.

    ``cells`` maps each scanned notebook's path to the layout of its code cells, so renderers
    can place its spans in cells. ``warnings`` are problems of the run itself that are no
    finding and no scan error: nothing was scanned, a ``per-file-ignores`` code names no rule.
    They never change the exit code (``--strict`` turns the configuration ones into errors
    before the scan). ``cache_key`` digests every input of the linking (the files it read, not
    the files it did not) when the scan's cache is on (None otherwise): later stages cache what
    they derive from the findings and the linking under it, with the findings.
    """

    pipelines: list[Pipeline] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)
    files_scanned: int = 0
    suppressed: int = 0
    suppression_issues: list[Any] = field(default_factory=list)
    cells: dict[str, CellLayout] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cache_key: str | None = None

    def to_json(self, version: str) -> dict[str, Any]:
        """The report's JSON document; every span-shaped object carries ``cell`` (see
        ``dpcheck.locations.place_in_cells``)."""
        document = {
            "dpcheck": version,
            "pipelines": [p.to_json() for p in self.pipelines],
            "findings": [f.to_json() for f in self.findings],
            "errors": [e.to_json() for e in self.errors],
            "files_scanned": self.files_scanned,
            "suppressed": self.suppressed,
            "suppression_issues": [i.to_json() for i in self.suppression_issues],
            "warnings": list(self.warnings),
        }
        return place_in_cells(document, self.cells)
