"""f-DP numerics: trade-off curves, Gaussian DP, PLD composition, the claimed SGM guarantee and
the corrected analysis of normalized and shuffled DP-SGD. Pure numpy/scipy, no I/O."""
