"""How a pipeline forms its batches: Poisson, shuffle (fixed-size batches) or unknown.

The loader the training loop iterates decides (following the object the loop reads, so an
Opacus ``make_private`` that returns a Poisson loader wins over the ``shuffle=True`` of the
loader passed in, and a project helper's returned loader is the one of the ``return`` the
default configuration reaches). The loop that takes optimizer steps wins over statistics or
pre-computation passes over other loaders. A loop over a project generator function reads
what it yields (``generators``: fixed slices are shuffle, Bernoulli-masked items Poisson). A
loop over ``range`` that draws ``next(it)`` from ``it = iter(loader)`` reads that loader; other
loops over ``range`` use the index sampling found in the same scopes: Bernoulli masks
(``rand(n) < q``, ``rand(n) > 1 - q``) are Poisson; permutations and fixed slices are shuffle.
Training fed by TF without a Python loop is read from where its batches are made: a tf.data
``.shuffle().batch(B)`` chain, an estimator ``numpy_input_fn`` (shuffled or sequential fixed
batches), Keras ``fit(batch_size=...)``, a Hugging Face dataset's ``to_tf_dataset(batch_size=B,
shuffle=...)`` (``hf_datasets``: fixed batches, shuffled or not).

Besides the coarse kind (poisson / shuffle = any fixed batch size / balls-and-bins), every
decision names its scheme, a kind of the sampler table (``dpcheck/data/samplers.json``):
shuffle, sequential, shuffled-or-sequential, buffered-shuffle, fixed-subsets (B distinct
indices drawn afresh every step), with-replacement, balls-and-bins. Library samplers, loaders,
permutations and index draws are recognised by their import-qualified name (a generator
method by the type the generator was built from) through that table; a draw with replacement
compared for equality with a batch number allocates examples to batches (balls-and-bins).

The modules, each importing only those listed before it:

* ``decision``: the decision (``Sampling``), the scheme titles, the dataset a loader batches;
* ``sampler_calls``: which sampler-table API a call invokes and which kind its switch selects;
* ``tf_inputs``: tf.data chains, estimator input fns, Keras ``fit``, ``to_tf_dataset``;
* ``index_draws``: the sampling a statement's index draws make (per-step draws);
* ``loops``: the shape of a training loop (its body, its steps, ``next(it)`` draws);
* ``loaders``: the sampling of a loader expression, followed to the call that built it;
* ``analyzer``: ``SamplingAnalyzer``, the decision of a pipeline from its training loops.
"""
