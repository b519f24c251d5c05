"""Nyström → exact convergence of FKR-F²E, and the exact path against the authors' dense one.

1. On 5,000 rows of ffe_credit (min-max scaled; polynomial degree 4, coef0 0.1; k = 20), how the
   Nyström result approaches the exact one as m grows: the largest principal angle between the
   fair feature subspaces (degrees) and the relative prediction difference, for both objectives.
2. Time of daskfair's exact path (Nyström with every row a landmark, the symmetric r × r
   problem) against the authors' dense approach — n × n matrices, ``pinv(K) @ M`` and a
   non-symmetric eigensolver — at n = 1,000 … 4,000, and how far apart their predictions are.

    python benchmarks/fkr_convergence.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import pairwise_kernels

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import load_dataset
from daskfair.fkr.estimators import FairKernelRegressor
from daskfair.scaling import ColumnScaler

KERNEL = {"kernel": "polynomial", "degree": 4, "coef0": 0.1}


def credit(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ds = load_dataset("ffe_credit")
    return ColumnScaler().fit_transform(ds.X[:n]), ds.y[:n].astype(float), ds.sensitive[:n]


def authors_dense(X, y, s, k, alpha=1.0):
    """The published recipe: n × n M of eq. (18), pinv(K) @ M, non-symmetric eig, k least."""
    K = pairwise_kernels(X, metric="poly", degree=4, coef0=0.1, gamma=1 / X.shape[1])
    Ku, Kp = K[s == 0], K[s == 1]
    nu, npr = len(Ku), len(Kp)
    M = (Ku.T @ Ku / nu**2 + Kp.T @ Kp / npr**2
         - 2 * np.outer(Ku.sum(0), Kp.sum(0)) / (nu * npr))
    vals, vecs = np.linalg.eig(np.linalg.pinv(K) @ M)
    order = np.argsort(vals.real)[:k]
    A = vecs[:, order].real
    return Ridge(alpha=alpha).fit(K @ A, y).predict(K @ A)


def main() -> None:
    n, k = 5000, 20
    X, y, s = credit(n)
    conv = []
    for objective in ("paper", "mean_discrepancy"):
        exact = FairKernelRegressor(**KERNEL, n_fair_features=k, objective=objective,
                                    approximation="exact").fit(X, y, sensitive_features=s)
        F_exact, p_exact = exact.transform(X), exact.predict(X)
        for m in (100, 200, 500, 1000, 2000, 5000):
            t0 = time.perf_counter()
            est = FairKernelRegressor(**KERNEL, n_fair_features=k, objective=objective,
                                      n_landmarks=m, random_state=0)
            est.fit(X, y, sensitive_features=s)
            secs = time.perf_counter() - t0
            angle = np.degrees(scipy.linalg.subspace_angles(est.transform(X), F_exact).max())
            diff = np.linalg.norm(est.predict(X) - p_exact) / np.linalg.norm(p_exact - y.mean())
            conv.append({"objective": objective, "m": m, "max_angle_deg": angle,
                         "rel_prediction_diff": diff, "fit_seconds": secs})
            print(conv[-1], flush=True)
    timing = []
    for n_t in (1000, 2000, 3000, 4000):
        Xt, yt, st = X[:n_t], y[:n_t], s[:n_t]
        kt = max(1, n_t // 250)
        t0 = time.perf_counter()
        # the authors' objective and their absolute ridge penalty 1.0 (daskfair's alpha is
        # relative to tr(K))
        trace = float(pairwise_kernels(Xt, metric="poly", degree=4, coef0=0.1,
                                       gamma=1 / Xt.shape[1]).trace())
        ours = FairKernelRegressor(**KERNEL, n_fair_features=kt, objective="paper",
                                   relative_alpha=1.0 / trace, approximation="exact").fit(
            Xt, yt, sensitive_features=st)
        p_ours = ours.predict(Xt)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        p_dense = authors_dense(Xt, yt, st, kt)
        t_dense = time.perf_counter() - t0
        timing.append({"n": n_t, "k": kt, "exact_seconds": t_ours, "dense_seconds": t_dense,
                       "speedup": t_dense / t_ours,
                       "rel_prediction_diff": float(np.linalg.norm(p_ours - p_dense)
                                                    / np.linalg.norm(p_dense - yt.mean()))})
        print(timing[-1], flush=True)
    write_result("fkr_convergence", {"n": n, "k": k, "kernel": KERNEL, "convergence": conv,
                                     "exact_vs_authors_dense": timing})
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for objective in ("paper", "mean_discrepancy"):
        rows = [r for r in conv if r["objective"] == objective]
        ms = [r["m"] for r in rows]
        axes[0].semilogx(ms, [r["max_angle_deg"] for r in rows], "o-", label=objective)
        axes[1].loglog(ms, [max(r["rel_prediction_diff"], 1e-16) for r in rows], "o-",
                       label=objective)
    axes[0].set(xlabel="landmarks m", ylabel="largest subspace angle (deg)",
                title=f"fair features vs exact (n={n}, k={k})")
    axes[1].set(xlabel="landmarks m", ylabel="relative prediction difference")
    axes[0].legend()
    ns = [r["n"] for r in timing]
    axes[2].plot(ns, [r["exact_seconds"] for r in timing], "o-", label="daskfair exact")
    axes[2].plot(ns, [r["dense_seconds"] for r in timing], "s--", label="authors' dense pinv·M")
    axes[2].set(xlabel="n", ylabel="seconds", title="exact path")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "fkr_convergence.png", dpi=120)


if __name__ == "__main__":
    main()
