"""Methods a library calls back: the overrides of a project subclass of a library class.

A library class is often extended by subclassing it and overriding some of its methods, which
the library's own code then calls (the template-method pattern). ``trainer.train()`` runs
``train`` inherited from ``transformers.Trainer``, and that calls the subclass's own
``create_optimizer``, ``training_step`` and ``get_train_dataloader``; a ``TrainerCallback``
subclass handed to the trainer has its ``on_step_end`` run after every step. No call in the
project names these methods, yet they run.

The library is not read, so which methods it calls back is not known statically. The rule is
therefore: a method inherited from a library class (import-qualified, ``NamesMixin.library_name``)
that is called on an instance of a project subclass of it reaches every method the project
classes of that instance define below the library base. They are the project's own code, and
only the project's classes are read, never the library's. The methods the library calls from
its evaluation or prediction loop (``Trainer.evaluate``, ``TrainerCallback.on_evaluate``,
``LightningModule.validation_step``: the vocabulary group ``evaluation_callbacks``, by the
library of the subclass's base, whatever the method's name says) are left out: the library runs
them on held-out data, outside the private training, and their calls (a loader helper called
with ``dp=False``) would otherwise be read as the training's. An instance of such a subclass passed
as an argument to a library call (``callbacks=[ledger]`` to the trainer's constructor) is kept
by the library and called back in the same way, so it reaches its methods too. A method the
project defines itself is an ordinary project call (``PipelineBuilder._callees``), not a callback.
"""

from __future__ import annotations

from collections.abc import Iterator

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.scope import Ctx
from dpcheck.pipelines.vocabulary import vocabulary
from dpcheck.sites.nodes import Attr, Call, Name, Node, Seq

def called_back(index: ProjectIndex, call: Call, where: Ctx) -> Iterator[Ctx]:
    """The project methods the library runs because of ``call`` at ``where``: those of the
    receiver's project classes when ``call`` is a library method called on an instance of a
    project subclass of a library class (``self``, ``super()`` or any object), and those of
    such instances passed as arguments to a library call."""
    receiver = library_receiver(index, call, where)
    if receiver is not None:
        yield from own_methods(index, receiver)
    passed = list(_passed(call))
    if not passed or (receiver is None and not _library_call(index, call, where)):
        return
    for arg in passed:
        cls = _instance(index, arg.dotted, where)
        if cls is not None and cls != receiver and _library_base(index, cls):
            yield from own_methods(index, cls)


def own_methods(index: ProjectIndex, cls: Ctx) -> Iterator[Ctx]:
    """The methods defined in the body of ``cls`` and of its project bases (not the library's:
    they are not read), except those the libraries of its bases call from their evaluation
    loop."""
    evaluation = vocabulary()["evaluation_callbacks"]
    roots = _library_roots(index, cls)
    for found in _project_classes(index, cls):
        summary = index.summary(found.path)
        if summary is None:
            continue
        for qual, scope in summary.scopes.items():
            parent, _, name = qual.rpartition(".")
            if scope.owner == found.scope and parent == found.scope \
                    and not any(evaluation.has_library_method(root, name) for root in roots):
                yield Ctx(found.path, qual)


def library_receiver(index: ProjectIndex, call: Call, where: Ctx) -> Ctx | None:
    """The project class of the object ``call`` is a library method of: ``super().m()`` in a
    method of a project class whose library base defines ``m``, ``self.m()`` and ``obj.m()``
    where the instance's class inherits ``m`` from a library class. None otherwise."""
    callee = call.callee
    if isinstance(callee, Attr) and isinstance(callee.base, Call) \
            and callee.base.name == "super":
        owner = _owner(index, where)
        summary = index.summary(where.path) if owner is not None else None
        if owner is None or summary is None or owner.scope not in summary.classes:
            return None
        module = Ctx(where.path, "<module>")
        inherited = any(base and index.library_name(f"{base}.{callee.attr}", module)
                        for base in summary.bases(owner.scope))
        return owner if inherited else None
    holder, _, method = (call.name or "").rpartition(".")
    if not holder or "?" in holder:
        return None
    cls = _owner(index, where) if holder == "self" else _instance(index, holder, where)
    if cls is None:
        return None
    return cls if index.library_name(f"{cls.scope}.{method}", Ctx(cls.path, "<module>")) \
        else None


def _library_call(index: ProjectIndex, call: Call, where: Ctx) -> bool:
    """Whether ``call`` calls a library object (by its import-qualified name)."""
    return bool(call.name) and "?" not in (call.name or "") \
        and index.library_name(call.name or "", where) is not None


def _passed(call: Call) -> Iterator[Name]:
    """The names passed to ``call``, also as items of a list or tuple display."""
    for arg in (*call.args, *call.kwargs.values()):
        items: tuple[Node, ...] = tuple(arg.items) if isinstance(arg, Seq) else (arg,)
        yield from (item for item in items if isinstance(item, Name))


def _owner(index: ProjectIndex, where: Ctx) -> Ctx | None:
    """The class of the method ``where`` reads."""
    scope = index.scope(where)
    return Ctx(where.path, scope.owner) if scope is not None and scope.owner else None


def _instance(index: ProjectIndex, name: str, where: Ctx) -> Ctx | None:
    """The project class of the object ``name`` holds (a local, a parameter, or an attribute
    such as ``self.ledger`` assigned a constructor call)."""
    if name == "self":
        return _owner(index, where)
    found = index.instance_class(name, where)
    if found is not None or "." not in name:
        return found
    assigned = index.assigned(name, where)
    made, place = assigned if assigned is not None else (None, where)
    return index.class_named(made.name or "", place) if isinstance(made, Call) else None


def _project_classes(index: ProjectIndex, cls: Ctx) -> tuple[Ctx, ...]:
    """``cls`` and its project bases, nearest first (each base a question of the index's memo
    and cycle guard, ``dpcheck.pipelines.questions``: a cycle of bases ends there)."""
    summary = index.summary(cls.path)
    if summary is None or cls.scope not in summary.classes:
        return ()
    found = [cls]
    for base in summary.bases(cls.scope):
        binding = index.bind(base, Ctx(cls.path, "<module>")) if base else None
        if binding is not None and binding.kind == "class":
            bound = binding.ctx
            found.extend(index.questions.ask(("project-classes", bound),
                                             lambda: _project_classes(index, bound), ()))
    return tuple(found)


def _library_base(index: ProjectIndex, cls: Ctx) -> bool:
    """Whether a library class is among the bases of ``cls`` or of its project bases."""
    return bool(_library_roots(index, cls))


def _library_roots(index: ProjectIndex, cls: Ctx) -> set[str]:
    """The libraries (import-qualified roots) of the library classes among the bases of ``cls``
    and of its project bases."""
    roots: set[str] = set()
    for found in _project_classes(index, cls):
        summary = index.summary(found.path)
        where = Ctx(found.path, "<module>")
        for base in summary.bases(found.scope) if summary is not None else ():
            head, _, _ = (base or "").partition(".")
            binding = index.bind(head, where) if head else None
            qualified = index.library_name(base, where) \
                if binding is not None and binding.kind == "module" else None
            if qualified is not None:
                root, _, _ = qualified.partition(".")
                roots.add(root)
    return roots
