"""SA2GD on a smooth relaxation of fair k-means, next to SAfairKM's front on the same data
=======================================================================================

The SAfairKM seed motivates SA2GD (its §5) with a continuous version of its bi-objective
problem (2): soft assignments S = softmax(Θ) (rows on the simplex) and the min operators of the
balance smoothed. Here

    f_a(Θ) = (1/N) Σ_p Σ_k s_pk ‖x_p − c_k‖²,  c_k = Σ_p s_pk x_p / Σ_p s_pk  (soft k-means)
    f_b(Θ) = −softmin_τ { G_kj / G_kj' : k, j ≠ j' },  G = SᵀV (soft cluster × group counts)

with softmin_τ(z) = −τ log Σ exp(−z/τ). ∂f_a/∂s_pk = ‖x_p − c_k‖²/N (c_k minimises the same
sum, so its own variation drops out); the f_a gradient is stochastic (a mini-batch of rows,
scaled to be unbiased), the f_b gradient exact. Every pair (n_a, n_total − n_a) is one task on
the cluster (``daskfair.sa2gd_front``); each run's last Θ is read as hard labels (argmax) and
scored with the exact cost f1 and balance f2, as SAfairKM's points are. Neither objective is
convex in Θ, so Theorem 5.1 does not apply here: the example shows the mechanism — the ratio
n_a : n_b moves the result along the trade-off — not the rate (see tests/test_sa2gd.py and
benchmarks/sa2gd_quadratics.py for that).

Run it from the repository root::

    python examples/sa2gd_fair_kmeans.py [--out sa2gd_fair_kmeans.png]
"""

import argparse

import numpy as np
from scipy.special import softmax

from daskfair import pareto_front, sa2gd_front
from daskfair.datasets import load_dataset, preprocess_safairkm
from daskfair.metrics import balance, kmeans_cost

K, TAU, BATCH = 10, 0.02, 256


class SmoothFairKMeans:
    """f_a, f_b and their gradients in the logits Θ (N × K) for data X and groups g."""

    def __init__(self, X: np.ndarray, groups: np.ndarray):
        self.X, self.N = X, len(X)
        self.V = np.eye(groups.max() + 1)[groups]  # (N, J) one-hot groups

    def _centers(self, S):
        return (S.T @ self.X) / S.sum(axis=0)[:, None]

    def _sqdist(self, X, C):
        return ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)

    def f_a(self, theta):
        S = softmax(theta, axis=1)
        return float((S * self._sqdist(self.X, self._centers(S))).sum() / self.N)

    def grad_a(self, theta, rng):
        S = softmax(theta, axis=1)
        rows = rng.choice(self.N, BATCH, replace=False)
        e = self._sqdist(self.X[rows], self._centers(S)) / self.N
        s = S[rows]
        g = np.zeros_like(theta)
        # softmax chain rule: ∂f/∂θ_pk = s_pk (e_pk − Σ_l s_pl e_pl); rows scaled by N/|batch|
        g[rows] = (self.N / BATCH) * s * (e - (s * e).sum(axis=1, keepdims=True))
        return g

    def _ratios(self, theta):
        S = softmax(theta, axis=1)
        G = S.T @ self.V  # (K, J)
        J = G.shape[1]
        num, den = np.meshgrid(np.arange(J), np.arange(J), indexing="ij")
        keep = num != den
        return S, G, num[keep], den[keep]

    def f_b(self, theta):
        _, G, num, den = self._ratios(theta)
        z = (G[:, num] / G[:, den]).ravel()
        return float(TAU * np.log(np.exp(-(z - z.min()) / TAU).sum()) - z.min())

    def grad_b(self, theta, rng):
        S, G, num, den = self._ratios(theta)
        z = G[:, num] / G[:, den]  # (K, pairs)
        w = softmax(-z.ravel() / TAU).reshape(z.shape)  # ∂f_b/∂z = −w
        dG = np.zeros_like(G)
        for i, (j, jj) in enumerate(zip(num, den, strict=True)):
            dG[:, j] -= w[:, i] / G[:, jj]
            dG[:, jj] += w[:, i] * G[:, j] / G[:, jj] ** 2
        e = self.V @ dG.T  # ∂f_b/∂s_pk = ∂f_b/∂G_{k, g(p)}
        return S * (e - (S * e).sum(axis=1, keepdims=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="sa2gd_fair_kmeans.png")
    ap.add_argument("--n-iter", type=int, default=600)
    args = ap.parse_args()

    d = load_dataset("safairkm_adult")
    X, sex = preprocess_safairkm(d.X, d.sensitive, n_samples=2000)
    problem = SmoothFairKMeans(X, sex)
    # start from k-means++ centers: logits −β‖x − c‖² (soft nearest-center labels)
    from sklearn.cluster import kmeans_plusplus

    centers, _ = kmeans_plusplus(X, K, random_state=0)
    theta0 = -20.0 * problem._sqdist(X, centers)
    n_total = 10
    step = 0.5 * len(X) / n_total  # per-entry gradients are O(1/N): steps scale with N
    runs = sa2gd_front(problem.grad_a, problem.grad_b, theta0, n_total=n_total,
                       n_iter=args.n_iter, step=lambda t: step / (1 + t / 200),
                       random_state=0, history_every=args.n_iter)
    print(f"{'n_a':>4}{'n_b':>4}{'f_a (soft)':>12}{'-f_b (soft)':>12}{'cost f1':>10}"
          f"{'balance f2':>12}")
    hard = []
    for r in runs:
        labels = np.argmax(r.x, axis=1)
        cost = kmeans_cost(X, labels)
        bal = balance(labels, sensitive_features=sex, n_clusters=K)
        hard.append((cost, bal))
        print(f"{r.n_a:>4}{r.n_b:>4}{problem.f_a(r.x):>12.4f}{-problem.f_b(r.x):>12.4f}"
              f"{cost:>10.4f}{bal:>12.3f}")
    front = pareto_front(X, sensitive_features=sex, n_clusters=K, max_iter=200, random_state=0)
    print(f"SAfairKM front on the same rows: {len(front)} points, cost "
          f"{front.cost[0]:.4f}-{front.cost[-1]:.4f}, balance "
          f"{front.balance[0]:.3f}-{front.balance[-1]:.3f}")

    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        print("matplotlib is not installed: no plot (pip install daskfair[plot])")
        return
    ax = front.plot(label=f"SAfairKM front ({len(front)} points)")
    cost, bal = np.array(hard).T
    ax.plot(cost, bal, "s-", ms=5, label="SA2GD, n_a = 0…10 (hard labels)")
    ax.set_title(f"Adult, {len(X)} rows, K = {K}")
    ax.legend(fontsize=8)
    ax.figure.tight_layout()
    ax.figure.savefig(args.out, dpi=120)
    print(f"plot written to {args.out}")


if __name__ == "__main__":
    main()
