"""Monte-Carlo micro-audit: does one step of the mechanism leak more than its SGM claim?

Modules: ``setting`` (the audited worst-case pair), ``mechanisms`` (reference torch releases),
``opacus_adapter`` (the installed Opacus optimizer), ``distinguisher`` (optimal LR test),
``stats`` (Clopper–Pearson, ε_L, δ_L), ``claim`` (the one-step SGM claim), ``evaluate``
(threshold selection and the certified verdict), ``runner`` (end to end), ``finding`` (audit a
scan finding), ``text`` and ``plot`` (output). Importing this package does not import torch;
``mechanisms``, ``releases``, ``runner`` and ``opacus_adapter`` need the ``audit`` extra.
"""
