"""Command-line options as values: argparse/click/absl declarations and parsed-argument objects.

``args.lr`` after ``args = parser.parse_args()`` reads the default of the option ``lr`` declared
in the same file (else anywhere in the project); ``FLAGS.lr`` reads an absl ``DEFINE_*``;
``main(**vars(parser.parse_args()))`` passes every option as a keyword; a project function
returning ``parse_args()``, or a local name bound to it, is followed; the dataclasses
``HfArgumentParser(...)`` parses are options too (their fields' defaults; for
``transformers.TrainingArguments`` the documented defaults of the fields that size batches and
steps).
"""

from __future__ import annotations

from dataclasses import replace

from dpcheck.model import Span
from dpcheck.pipelines.binding import Binding
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import calls_in
from dpcheck.sites.ir import IR, tail_name
from dpcheck.sites.nodes import Attr, Call, Const, Name, Node, Num, Seq, node
from dpcheck.sites.views import Option

#: The absl flag-values object: ``FLAGS.x`` (or ``flags.FLAGS.x``) reads ``DEFINE_*("x", ...)``.
ABSL_FLAGS = "FLAGS"
TRAINING_ARGUMENTS = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments"})
#: Defaults of ``transformers.TrainingArguments`` fields that size batches and steps (unchanged
#: from transformers 3 to 4.x).
TRAINING_ARGUMENT_DEFAULTS: dict[str, float] = {
    "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "num_train_epochs": 3.0,
    "max_steps": -1,
}


class OptionsMixin:
    """Command-line options of ``ProjectIndex`` (see the module docstring)."""

    def option(self, dest: str, path: str) -> Binding | None:
        """The argparse/click/absl option ``dest`` declared in ``path`` (else anywhere)."""
        ordered = [path, *(p for p in self.project.candidate_paths() if p != path)]
        for candidate in ordered:
            summary = self.summary(candidate)
            if not summary:
                continue
            for entry in summary.options:
                if entry.dest == dest:
                    default = entry.default or _implicit_default(entry)
                    return Binding("option", default, Ctx(candidate, "<module>"),
                                   entry.line, name=dest)
        return None

    def parsed_option(self, call: IR, ctx: Ctx, attr: str) -> Binding | None:
        """Option ``attr`` of a ``parser.parse_args()`` call, or of ``vars()`` of parsed args
        (``main(**vars(parser.parse_args()))`` passes every option as a keyword)."""
        call = node(call)
        if not isinstance(call, Call):
            return None
        tail = call.method
        if tail == "vars" and len(call.args) == 1:
            inner = call.argument(0)
            if isinstance(inner, Call):
                return self.parsed_option(inner, ctx, attr)
            return self.attribute(f"{inner.dotted}.{attr}", ctx) if isinstance(inner, Name) \
                else None
        return self.option(attr, ctx.path) if calls_in("option_parses", call, ctx, self) \
            else None

    def _returned_option(self, call: Call, ctx: Ctx, attr: str) -> Binding | None:
        target = self.function(call.name or "", ctx)
        scope = self.scope(target) if target else None
        if target is None or scope is None:
            return None
        for stmt in scope.statements:
            value = stmt.expr
            if stmt.kind == "return" and isinstance(value, Name):  # ``args = ...; return args``
                bound = self.bind(value.dotted, Ctx(target.path, target.scope, stmt.line))
                value = bound.ir if bound is not None and bound.kind == "assign" \
                    and not bound.index else None
            if stmt.kind == "return" and isinstance(value, Call) and calls_in(
                    "option_parses", value, Ctx(target.path, target.scope, stmt.line), self):
                return self.option(attr, target.path)
        return None

    def _undeclared_option(self, arg: IR, ctx: Ctx) -> bool:
        """Whether ``arg`` is the item ``name`` of ``**vars(parser.parse_args())`` while the
        file's parser declares options but not ``name``: the keyword is not passed at all (the
        parameter keeps its default), whatever another script declares."""
        arg = node(arg)
        if not isinstance(arg, Attr) or not isinstance(arg.base, Call) \
                or arg.base.method != "vars":
            return False
        summary = self.summary(ctx.path)
        declared = {entry.dest for entry in summary.options} if summary else set()
        return bool(declared) and arg.attr not in declared

    def dataclass_field(self, owner: Binding, attr: str) -> Binding | None:
        """``x.attr`` where ``owner`` binds ``x`` to one of the dataclass instances
        ``HfArgumentParser((A, B, C)).parse_args_into_dataclasses()`` returns: the field ``attr`` of
        the matching class as an ``option`` binding whose ``ir`` is the field's default. None when
        the call, the class or the field is not found (or the field has no literal default). The
        parse is matched by import-qualified name (vocabulary group ``dataclass_parses``): an
        ``HfArgumentParser`` imported under another name parses, a project's own parser does not."""
        call = owner.ir
        where = replace(owner.ctx, line=owner.line)
        if owner.kind != "assign" or not isinstance(call, Call) \
                or not calls_in("dataclass_parses", call, where, self):
            return None
        receiver, _, _ = (call.name or "").rpartition(".")
        parser = self.bind(receiver, where)
        made = parser.assigned() if parser is not None else None
        if made is None:
            return None
        constructor, place = made
        given = constructor.argument(0) if isinstance(constructor, Call) else None
        if given is None:
            return None
        classes = given.items if isinstance(given, Seq) else [given]
        position = next(iter(owner.index or ()), 0)
        if position >= len(classes) or not isinstance(classes[position], Name) \
                or len(owner.index or (0,)) != 1:
            return None
        return self._field(classes[position].dotted, place, attr,
                           Span(place.path, *constructor.position))

    def _field(self, name: str, ctx: Ctx, attr: str, parser: Span) -> Binding | None:
        """The field ``attr`` of the dataclass ``name`` (read at ``ctx``), through its bases
        (each base a question of the index's memo and cycle guard,
        ``dpcheck.pipelines.questions``: a cycle of bases ends there)."""
        binding = self.bind(name, ctx)
        if binding is not None and binding.kind == "module":
            known = TRAINING_ARGUMENT_DEFAULTS.get(attr) if binding.name.startswith(
                "transformers") and tail_name(binding.name) in TRAINING_ARGUMENTS else None
            return Binding("option", Num(["n", known]), Ctx(parser.path, "<module>"),
                           parser.line, name=attr) if known is not None else None
        summary = self.summary(binding.ctx.path) if binding is not None else None
        if binding is None or binding.kind != "class" or summary is None:
            return None
        for stmt in summary.scopes[binding.name].statements:
            if stmt.kind == "assign" and stmt.target == attr:
                value: Node | None = stmt.expr
                if isinstance(value, Call) and value.method == "field":
                    value = value.kwargs.get("default")
                return Binding("option", value, Ctx(binding.ctx.path, binding.name), stmt.line,
                               name=attr) if value is not None else None
        where = Ctx(binding.ctx.path, "<module>")
        for base in summary.bases(binding.name):
            key = ("dataclass-field", base, where, attr, parser)
            found = self.questions.ask(key, lambda: self._field(base, where, attr, parser),
                                       None) if base else None
            if found is not None:
                return found
        return None


def _implicit_default(entry: Option) -> Const | None:
    """The default an argparse flag without ``default=`` has by its action: ``False`` for
    ``action="store_true"``, ``True`` for ``"store_false"``."""
    action = entry.action
    return Const(["c", action == "store_false"]) if action in ("store_true", "store_false") \
        else None
