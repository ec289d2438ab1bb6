"""Monte-Carlo micro-audit: does one step of the mechanism leak more than its SGM claim?

Modules: ``setting`` (the audited worst-case pair), ``mechanisms`` (reference torch releases),
``opacus_adapter`` (the installed Opacus optimizer: 1.x ``make_private``; 0.x ``attach`` in
``opacus0_adapter``), ``distinguisher`` (optimal LR test),
``stats`` (Clopper–Pearson, ε_L, δ_L), ``claim`` (the one-step SGM claim), ``evaluate``
(threshold selection and the certified verdict), ``runner`` (end to end), ``finding`` (audit a
scan finding), ``text`` and ``plot`` (output). Importing this package does not import torch;
``mechanisms``, ``releases``, ``runner`` and the adapters need the ``audit`` extra. The 0.x
adapter's tests run only with ``DPCHECK_OPACUS0_SITE`` pointing at an Opacus 0.x install
(``pip install --target DIR --no-deps opacus==0.15.0``).
"""
