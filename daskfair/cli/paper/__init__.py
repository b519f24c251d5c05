"""The source papers' protocols as the demo and the ``fkr`` job run them.

:mod:`.methods` is the registry of FKR-F²E and the methods it is compared with (the ``fkr``
job's baselines); :mod:`.fkr_paper` is the FKR-F²E paper's Table I protocol; :mod:`.fce_paper`
the FCE paper's evaluation of its variants on a pool of base clusterings. Only the command
line imports this package (tests/test_layers.py).
"""
