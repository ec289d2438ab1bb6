"""Hugging Face ``datasets`` objects as batch sources: ``Dataset.to_tf_dataset``.

``ds.to_tf_dataset(batch_size=B, shuffle=True)`` hands Keras a tf.data pipeline of fixed-size
batches of a shuffled order (``shuffle=False``, the library's default: batches in order): the
fixed-size batches of the ``shuffle`` sampling kind either way, never a Poisson subsample.

The call is recognised by where its receiver comes from, not by the method's name alone: a value
the ``datasets`` library made (``load_dataset(...)``, ``Dataset.from_dict(...)``), reached through
assignments, subscripts (``splits["train"]``) and method calls of such values (``.map()``,
``.filter()``, ``.shuffle()``), each library call matched by its import-qualified name
(``ProjectIndex.library_name``). A project's own object with a ``to_tf_dataset`` method is
project code.
"""

from __future__ import annotations

from dpcheck.pipelines.index import ProjectIndex
from dpcheck.pipelines.library_objects import maker
from dpcheck.pipelines.scope import Ctx
from dpcheck.sites.nodes import Call, Node

LIBRARY = "datasets"
#: The ``datasets.Dataset`` method that batches a dataset for Keras.
TO_TF_DATASET = "to_tf_dataset"


def is_to_tf_dataset(index: ProjectIndex, call: Node, ctx: Ctx) -> bool:
    """Whether ``call`` is ``to_tf_dataset`` of an object the ``datasets`` library made."""
    return isinstance(call, Call) and call.method == TO_TF_DATASET \
        and call.receiver is not None and made_by_datasets(index, call.receiver, ctx)


def made_by_datasets(index: ProjectIndex, value: Node, ctx: Ctx) -> bool:
    """Whether ``value`` read at ``ctx`` is an object of the ``datasets`` library (see the
    module docstring); False when its origin is another library, the project, or not decided
    (a name followed is a question of the guard of ``dpcheck.pipelines.questions``)."""
    return maker(index, value, ctx) == LIBRARY
