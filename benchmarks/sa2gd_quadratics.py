"""SA2GD on two strongly convex quadratics with noisy gradients (the seed's Theorem 5.1).

f_a = ½(x − a)ᵀA(x − a), f_b = ½(x − b)ᵀB(x − b) in 2-D, stochastic gradients with Gaussian
noise (σ = 0.5), the theorem's step α_t = 2 / (c (t + 1)(n_a + n_b)) with c the smaller
strong-convexity constant. Two measurements:

1. rate: optimality gap E[S(x_T, λ)] − S(x*, λ) (mean of 200 independent replicates) for
   T = 10² … 10⁵ and three pairs; the fitted log–log slope should be about −1;
2. front: all pairs (n_a, 10 − n_a) as tasks on the cluster (10⁴ iterations, 50 replicates):
   the points (f_a, f_b) of the final iterates against the exact weighted-sum front
   {(f_a(x*(λ)), f_b(x*(λ))): λ ∈ [0, 1]}, and each iterate's distance to x*(λ).

    python benchmarks/sa2gd_quadratics.py
"""

from __future__ import annotations

import time

import distributed
import numpy as np

from _common import RESULTS, pyplot, write_result
from daskfair import sa2gd, sa2gd_front

A = np.array([[1.0, 0.0], [0.0, 3.0]])
B = np.array([[2.0, 0.5], [0.5, 1.0]])
a = np.array([1.0, 0.0])
b = np.array([-1.0, 2.0])
SIGMA = 0.5
C = min(np.linalg.eigvalsh(A).min(), np.linalg.eigvalsh(B).min())


def grad_a(x, rng):
    return (x - a) @ A + SIGMA * rng.standard_normal(x.shape)


def grad_b(x, rng):
    return (x - b) @ B + SIGMA * rng.standard_normal(x.shape)


def f_a(x):
    return 0.5 * np.einsum("...i,ij,...j->...", x - a, A, x - a)


def f_b(x):
    return 0.5 * np.einsum("...i,ij,...j->...", x - b, B, x - b)


def minimiser(lam):
    return np.linalg.solve(lam * A + (1 - lam) * B, lam * A @ a + (1 - lam) * B @ b)


def main() -> None:
    x0 = np.array([3.0, -3.0])
    rate = []
    for n_a, n_b in [(1, 3), (2, 2), (3, 1)]:
        lam = n_a / (n_a + n_b)
        t0 = time.perf_counter()
        res = sa2gd(grad_a, grad_b, np.tile(x0, (200, 1)), n_a=n_a, n_b=n_b,
                    n_iter=100_000, strong_convexity=C, random_state=0, history_every=100)
        star = lam * f_a(minimiser(lam)) + (1 - lam) * f_b(minimiser(lam))
        gap = (lam * f_a(res.history) + (1 - lam) * f_b(res.history)).mean(axis=1) - star
        T = res.iterations
        fit = (T >= 100) & (gap > 0)
        slope = float(np.polyfit(np.log(T[fit]), np.log(gap[fit]), 1)[0])
        rate.append({"n_a": n_a, "n_b": n_b, "lambda": lam, "slope": slope,
                     "gap_at": {int(t): float(gap[T == t][0]) for t in (100, 1000, 10_000,
                                                                         100_000)},
                     "seconds": time.perf_counter() - t0, "T": T, "gap": gap})
        print(f"pair ({n_a}, {n_b}): slope {slope:.3f}", flush=True)
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as client):
        runs = sa2gd_front(grad_a, grad_b, np.tile(x0, (50, 1)), n_total=10, n_iter=10_000,
                           strong_convexity=C, random_state=1, client=client,
                           history_every=10_000)
    front = []
    for r in runs:
        x = r.x.mean(axis=0)
        front.append({"n_a": r.n_a, "n_b": r.n_b, "lambda": r.weight, "x": x,
                      "f_a": float(f_a(x)), "f_b": float(f_b(x)),
                      "distance_to_minimiser": float(np.linalg.norm(x - minimiser(r.weight)))})
    lams = np.linspace(0, 1, 201)
    exact = np.array([[f_a(minimiser(lam)), f_b(minimiser(lam))] for lam in lams])

    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for r in rate:
        ax1.loglog(r["T"][1:], r["gap"][1:], label=f"({r['n_a']}, {r['n_b']}): slope "
                   f"{r['slope']:.2f}")
    ref_T = np.array([1e2, 1e5])
    ax1.loglog(ref_T, rate[0]["gap_at"][100] * 100 / ref_T, "k--", label="1/T")
    ax1.set_xlabel("iteration T")
    ax1.set_ylabel("E[S(x_T, λ)] − S(x*, λ)")
    ax1.legend(fontsize=8)
    ax2.plot(exact[:, 0], exact[:, 1], "-", label="exact weighted-sum front")
    ax2.plot([p["f_a"] for p in front], [p["f_b"] for p in front], "o",
             label="SA2GD, (n_a, 10 − n_a)")
    ax2.set_xlabel("f_a")
    ax2.set_ylabel("f_b")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "sa2gd_quadratics.png", dpi=120)
    for r in rate:
        del r["T"], r["gap"]
    write_result("sa2gd_quadratics", {
        "sigma": SIGMA, "strong_convexity": C, "rate": rate, "front": front,
        "max_distance_to_minimiser": max(p["distance_to_minimiser"] for p in front)})


if __name__ == "__main__":
    main()
