"""Reproduction of the source papers' experiments, outside the library proper.

:mod:`.methods` is the one registry of FKR-F²E and the methods it is compared with, used by
the command line's ``fkr`` job and by :mod:`.fkr_paper`, the FKR-F²E paper's Table I
protocol; :mod:`.fce_paper` is the FCE paper's evaluation of its variants on a pool of base
clusterings. The library (``daskfair`` outside ``daskfair.cli`` and this package) never
imports this package.
"""
