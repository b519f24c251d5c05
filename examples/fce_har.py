"""Fair clustering ensemble on the FCE authors' HAR pool
=====================================================

HAR: 10,299 recordings of 6 activities by 30 people (the protected group). The pool holds 100
k-means base clusterings; FCE finds one consensus of the first 10 that is fair towards the
30 people and has clusters of equal capacity — from the labelings alone, never the features.
The script prints the FCE report of a base clustering, of the consensus without the fairness
term (FCE-f) and of FCE, and then how accuracy and fairness trade off as the weight grows.

Run it from the repository root::

    python examples/fce_har.py
"""

import numpy as np

from daskfair import FairClusteringEnsemble, load_fce_pool
from daskfair.cli.plots import plot_fce_metrics
from daskfair.ensemble import auto_fairness
from daskfair.metrics import REPORT_COLUMNS, clustering_report


def report_line(label, y, labels, groups):
    r = clustering_report(y, labels, sensitive_features=groups, n_clusters=6)
    return f"{label:<24}" + "".join(f"{r[c]:>7.3f}" for c in REPORT_COLUMNS)


def main() -> None:
    base, y, groups = load_fce_pool("har")
    pool = base[:, :10]
    print(f"HAR pool: {base.shape[0]} rows, {base.shape[1]} base clusterings, "
          f"{groups.max() + 1} groups")
    print(f"{'':<24}" + "".join(f"{c:>7}" for c in REPORT_COLUMNS))
    print(report_line("k-means (base 0)", y, pool[:, 0], groups))
    plain = FairClusteringEnsemble(6, fairness_weight=0.0, random_state=0)
    print(report_line("FCE-f (no fairness)", y, plain.fit_predict(
        pool, sensitive_features=groups), groups))
    fce = FairClusteringEnsemble(6, random_state=0)
    labels = fce.fit_predict(pool, sensitive_features=groups)
    print(report_line("FCE (fairness='auto')", y, labels, groups))
    weight = fce.consensus_weight * fce.fairness_weight_
    print(f"\nauto λ2 = {fce.fairness_weight_:.3g} (λ1·λ2 = {weight:.3g}); "
          f"{fce.n_iter_} iterations; objective {fce.objective_[0]:.6g} → "
          f"{fce.objective_[-1]:.6g}")
    print("\ntrade-off over the fairness weight (multiples of auto):")
    auto = auto_fairness(len(y), 6, int(groups.max()) + 1)
    for factor in (0.25, 0.5, 1, 2, 4):
        est = FairClusteringEnsemble(6, fairness_weight=factor * auto, random_state=0)
        out = est.fit_predict(pool, sensitive_features=groups)
        print(report_line(f"  {factor:g} × auto", y, out, groups))
    print(f"\ncluster sizes of FCE: {np.bincount(labels, minlength=6).tolist()}")

    # the figure `daskfair plot` draws for an FCE run: every metric, base mean ± std vs FCE
    rows = np.array([[clustering_report(y, pool[:, j], sensitive_features=groups,
                                        n_clusters=6)[c] for c in REPORT_COLUMNS]
                     for j in range(pool.shape[1])])
    consensus = clustering_report(y, labels, sensitive_features=groups, n_clusters=6)
    report = {"columns": list(REPORT_COLUMNS), "consensus": consensus,
              "base_mean": dict(zip(REPORT_COLUMNS, rows.mean(axis=0), strict=True)),
              "base_std": dict(zip(REPORT_COLUMNS, rows.std(axis=0, ddof=1), strict=True))}
    try:
        ax = plot_fce_metrics(report)
    except ImportError as exc:  # matplotlib is the optional `plot` extra
        print(f"no plot: {exc}")
        return
    ax.set_title("HAR: 10 k-means base clusterings and their FCE consensus")
    ax.figure.tight_layout()
    ax.figure.savefig("fce_har.png", dpi=120)
    print("figure written to fce_har.png")


if __name__ == "__main__":
    main()
