"""FCE with a consensus coarser than its base clusterings (c_i > c): the seed's R(i) step
against daskfair's.

For c_i > c the seed's R(i) = polar(Y(i)ᵀH) is not a minimiser and can raise the objective;
daskfair's ``align_base`` is a majorisation–minimisation from the previous R(i). On the six
FCE pools, 10 subsets of 10 base clusterings each, c = max(2, classes // 2), 30 iterations
with tol = 0, ``fairness_weight="auto"``: how many iterations raised the objective, the final
objective, and ACC / NMI / Bal of the consensus (mean over subsets). The seed's step is
restored in this process by replacing ``consensus.align_base`` with the polar factor.

    python benchmarks/fce_coarser_consensus.py
"""
import json

import numpy as np

import daskfair.ensemble.consensus as consensus
from _common import write_result
from daskfair.datasets import load_fce_pool
from daskfair.ensemble import FairClusteringEnsemble, auto_fairness
from daskfair.metrics import clustering_report


def seed_step(M, sizes, previous, alignment="rotation", **kw):
    return consensus.polar(M, alignment)


def main() -> None:
    orig = consensus.align_base
    out = []
    for pool in ("ds", "har", "mnist_usps", "reverse_mnist", "jaffe", "yale"):
        base, y, g = load_fce_pool(pool)
        c_true = len(np.unique(y))
        c = max(2, c_true // 2)  # a consensus coarser than the base clusterings: c_i > c
        for name, fn in (("seed polar", seed_step), ("align_base", orig)):
            consensus.align_base = fn
            rises, finals, acc = [], [], []
            for sub in range(10):
                b = base[:, sub * 10:(sub + 1) * 10]
                lam2 = auto_fairness(len(g), c, len(np.unique(g)))
                est = FairClusteringEnsemble(c, fairness_weight=lam2, tol=0, max_iter=30,
                                             random_state=sub)
                est.fit(b, sensitive_features=g)
                d = np.diff(est.objective_)
                rises.append(int((d > 1e-12 * np.abs(est.objective_[:-1])).sum()))
                finals.append(est.objective_[-1])
                r = clustering_report(y, est.labels_, sensitive_features=g, n_clusters=c_true)
                acc.append((r["ACC"], r["NMI"], r["Bal"]))
            a = np.array(acc).mean(axis=0)
            row = {"pool": pool, "c_i": int(base[:, :10].max() + 1), "c": c, "step": name,
                   "subsets with a rise": int(np.sum(np.array(rises) > 0)),
                   "rises": int(np.sum(rises)), "final objective": float(np.mean(finals)),
                   "ACC": a[0], "NMI": a[1], "Bal": a[2]}
            print(json.dumps(row), flush=True)
            out.append(row)
        consensus.align_base = orig
    write_result("fce_coarser_consensus", {"subsets": 10, "iterations": 30, "rows": out})


if __name__ == "__main__":
    main()
