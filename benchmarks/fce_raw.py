"""Raw features to a fair consensus: base clusterings on the cluster, then FCE.

MNIST-USPS (2,000 MNIST test digits resized to 16 × 16 + 1,800 USPS digits, group = source,
c = 10), Adult and Census-KDD (group = sex, c = 2, the income classes). Features are
z-scored; m base clusterings (a "diverse" pool: k-means, MiniBatch k-means, spectral on a
Nyström embedding, agglomerative) run as tasks; FCE-f (no fairness term) and FCE with the
fairness weight at multiples of its "auto" value give the full report and the trade-off curve
(ACC/NMI against Bal/CCE).

    python benchmarks/fce_raw.py [--runs 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import load_dataset, load_mnist_usps
from daskfair.ensemble import FairClusteringEnsemble, auto_fairness, base_clusterings
from daskfair.metrics import REPORT_COLUMNS, clustering_report
from daskfair.runtime.clients import client_context

FACTORS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
METHODS = ("kmeans", "minibatch", "spectral", "agglomerative")


def data_sets():
    mu = load_mnist_usps()
    yield "MNIST-USPS", mu.X, mu.y, mu.sensitive, 10
    for name, label in (("adult", "Adult"), ("census_income_kdd", "Census-KDD")):
        d = load_dataset(name)
        yield label, d.X, d.y, d.sensitive, 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    out = {}
    with client_context(n_workers=args.workers, dashboard_address=None) as client:
        for label, X, y, s, c in data_sets():
            X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
            t0 = time.perf_counter()
            base = base_clusterings(X, n_clusters=c, n_runs=args.runs, methods=METHODS,
                                    random_state=0, client=client)
            t_base = time.perf_counter() - t0
            km = np.array([[clustering_report(y, base[:, j], sensitive_features=s,
                                              n_clusters=c)[k] for k in REPORT_COLUMNS]
                           for j in range(base.shape[1])])
            auto = auto_fairness(len(y), c, len(np.unique(s)))
            curve = []
            for f in FACTORS:
                t0 = time.perf_counter()
                est = FairClusteringEnsemble(c, fairness_weight=f * auto, random_state=0)
                labels = est.fit_predict(base, sensitive_features=s)
                rep = clustering_report(y, labels, sensitive_features=s, n_clusters=c)
                curve.append({"factor_of_auto": f, "lambda2": f * auto,
                              "iterations": est.n_iter_,
                              "seconds": time.perf_counter() - t0, **rep})
                print(label, curve[-1], flush=True)
            out[label] = {"n": len(y), "d": X.shape[1], "c": c, "runs": args.runs,
                          "base_seconds": t_base,
                          "base_mean": dict(zip(REPORT_COLUMNS, km.mean(axis=0), strict=True)),
                          "FCE-f": curve[0], "FCE": curve[FACTORS.index(1.0)],
                          "curve": curve}
    write_result("fce_raw", {"methods": METHODS, "results": out})
    plt = pyplot()
    fig, axes = plt.subplots(1, len(out), figsize=(5 * len(out), 4))
    for ax, (label, r) in zip(axes, out.items(), strict=True):
        for acc_key, fair_key, style in (("ACC", "Bal", "o-"), ("NMI", "CCE", "s--")):
            ax.plot([p[fair_key] for p in r["curve"]], [p[acc_key] for p in r["curve"]],
                    style, label=f"{acc_key} vs {fair_key}")
        ax.plot(r["base_mean"]["Bal"], r["base_mean"]["ACC"], "k*", markersize=10,
                label="base clusterings (mean)")
        ax.set(title=f"{label} (fairness 0 … 8 × auto)", xlabel="Bal / CCE",
               ylabel="ACC / NMI")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "fce_raw.png", dpi=120)


if __name__ == "__main__":
    main()
