"""A fair clustering ensemble on synthetic blobs
==============================================

3,000 points in three blobs, each blob mostly one group's, so every base clustering is
unfair. Ten k-means base clusterings (each from another seed and start) go into
``FairClusteringEnsemble``: without its fairness term (``fairness_weight=0``, the FCE
paper's FCE-f) the consensus agrees with the blobs; with the size-free ``"auto"`` weight and
larger ones it trades agreement with the blobs (ACC, NMI) for fairness (Bal, MNCE, f_CCE)
and equal cluster sizes (CCE). The consensus reads only the labelings, never the features.

Run it from the repository root::

    python examples/fce_synthetic.py
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans

from daskfair import FairClusteringEnsemble, clustering_report, make_fair_blobs
from daskfair.metrics import REPORT_COLUMNS


def main() -> None:
    X, s, y = (np.asarray(a) for a in make_fair_blobs(3000, n_features=2, n_clusters=3,
                                                      group_bias=0.7, random_state=0))
    base = np.column_stack([KMeans(3, n_init=1, init="random", random_state=i).fit_predict(X)
                            for i in range(10)])

    reports = [clustering_report(y, b, sensitive_features=s) for b in base.T]
    rows = {"base (mean)": {c: np.mean([r[c] for r in reports]) for c in REPORT_COLUMNS}}
    for weight in (0, "auto", 1e-3, 1e-2):
        fce = FairClusteringEnsemble(3, fairness_weight=weight, random_state=0)
        labels = fce.fit_predict(base, sensitive_features=s)
        rows[f"FCE, weight {weight}"] = clustering_report(y, labels, sensitive_features=s)

    print(f"{'':<22}" + "".join(f"{c:>7}" for c in REPORT_COLUMNS))
    for name, r in rows.items():
        print(f"{name:<22}" + "".join(f"{r[c]:>7.3f}" for c in REPORT_COLUMNS))

    _, ax = plt.subplots(figsize=(8, 3.5))
    width = 0.8 / len(rows)
    for i, (name, r) in enumerate(rows.items()):
        ax.bar(np.arange(len(REPORT_COLUMNS)) + i * width, [r[c] for c in REPORT_COLUMNS],
               width, label=name)
    ax.set_xticks(np.arange(len(REPORT_COLUMNS)) + 0.4 - width / 2, REPORT_COLUMNS)
    ax.legend(fontsize=8)
    ax.set_title("FCE on synthetic blobs: agreement with the blobs against fairness")
    plt.show()


if __name__ == "__main__":
    main()
