"""The FKR-F²E paper's Table I protocol: scale on the training rows, fit a method, report the
test rows' demographic parity difference (the paper's eq. 16) and error. :data:`CV_METHOD`
adds :class:`~daskfair.FairKernelClassifierCV` under a bound of .01."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...kernels import kernel_block, kernel_params
from ...scaling import ColumnScaler
from .methods import REGISTRY, constant_from_labels, predict_classes, score

__all__ = ["CV_METHOD", "METHODS", "PAPER_KERNELS", "PAPER_RIDGE_PENALTIES", "paper_alphas",
           "run_method"]

#: The model-selection workflow under a disparity bound of .01, on the same kernel.
CV_METHOD = "FairKernelClassifierCV (<= .01)"

#: Each method of the paper's table (and :data:`CV_METHOD`): its registry entry and the
#: parameters it differs in.
_ENTRIES: dict[str, tuple[str, dict[str, Any]]] = {
    "FKR-F2E (paper)": ("FKR-F2E", {"objective": "paper"}),
    "FKR-F2E (mean_discrepancy)": ("FKR-F2E", {"objective": "mean_discrepancy"}),
    "FKRR": ("FKRR", {}),
    "kernel ridge": ("kernel ridge", {}),
    "constant": ("constant", {}),
    CV_METHOD: ("CV", {"disparity_bound": 0.01}),
}

#: The methods of the paper's Table I, in its order.
METHODS = tuple(m for m in _ENTRIES if m != CV_METHOD)

#: Kernels of the paper's Table I per FKR-F²E data set.
PAPER_KERNELS: dict[str, dict[str, Any]] = {
    "ffe_credit": {"kernel": "polynomial", "degree": 4, "coef0": 0.1},
    "ffe_crime": {"kernel": "polynomial", "degree": 4, "coef0": 0.1},
    "ffe_compas": {"kernel": "sigmoid", "coef0": 0.01},
}

#: The paper's grid of the absolute ridge penalty γ of eq. (13), [1e-3, 1e2].
PAPER_RIDGE_PENALTIES = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2)


def paper_alphas(X: np.ndarray, kernel: dict[str, Any]) -> np.ndarray:
    """The ``relative_alpha`` of each γ of :data:`PAPER_RIDGE_PENALTIES` on the rows ``X``:
    γ / tr(K), tr(K) = Σ k(x, x) (:class:`~daskfair.FairKernelRegressor`)."""
    params = kernel_params(kernel["kernel"], X.shape[1], gamma=kernel.get("gamma"),
                           degree=kernel.get("degree", 3), coef0=kernel.get("coef0", 1.0))
    trace = sum(float(np.trace(kernel_block(X[i:i + 1024], X[i:i + 1024], params)))
                for i in range(0, len(X), 1024))
    return np.asarray(PAPER_RIDGE_PENALTIES) / trace


def _grid_alpha(method: str, X: np.ndarray, y: np.ndarray, s: np.ndarray,
                train: np.ndarray, rng: np.random.Generator, **kw: Any) -> float:
    # the paper's protocol: every γ of its grid fitted on 80 % of the training rows, scored
    # on the other 20 %; the test rows are never seen
    order = rng.permutation(train)
    fit = np.arange(int(0.8 * len(order)))
    Xt, yt, st = X[order], y[order], s[order]
    alphas = paper_alphas(ColumnScaler().fit(Xt[fit]).transform(Xt)[fit], kw["kernel"])
    errors = [run_method(method, Xt, yt, st, fit, relative_alpha=a, **kw)["error"]
              for a in alphas]
    return float(alphas[int(np.argmin(errors))])


def run_method(
    method: str,
    X: np.ndarray,
    y: np.ndarray,
    s: np.ndarray,
    train: np.ndarray,
    *,
    kernel: dict[str, Any],
    n_fair_features: int | None = None,
    fairness_weight: float | None = None,
    fkrr_fairness_weight: float = 1.0,
    relative_alpha: float | str = 1e-4,
    n_landmarks: int = 1000,
    random_state: Any = 0,
) -> dict[str, float]:
    """Fit ``method`` (one of :data:`METHODS` or :data:`CV_METHOD`) on the ``train`` rows of
    ``X`` (unscaled: min-max scaled here on those rows), 0/1 labels ``y`` and groups ``s``;
    score every other row. ``relative_alpha="grid"`` chooses it on the training rows from
    the paper's grid (80/20 within them); a training set of at most ``n_landmarks`` rows is
    fitted exactly. Returns ``disparity``, ``error`` and the ``relative_alpha`` used."""
    if method not in _ENTRIES:
        raise ValueError(f"unknown method {method!r}; choose one of {tuple(_ENTRIES)}.")
    y = np.asarray(y).astype(int)
    params = {**kernel, "n_fair_features": n_fair_features, "fairness_weight": fairness_weight,
              "fkrr_fairness_weight": fkrr_fairness_weight, "random_state": random_state}
    if relative_alpha == "grid" and method not in ("constant", CV_METHOD):
        relative_alpha = _grid_alpha(
            method, X, y, s, train, np.random.default_rng(random_state), kernel=kernel,
            n_fair_features=n_fair_features, fairness_weight=fairness_weight,
            fkrr_fairness_weight=fkrr_fairness_weight, n_landmarks=n_landmarks,
            random_state=random_state)
    test = np.setdiff1d(np.arange(len(y)), train)
    Xs = ColumnScaler().fit(X[train]).transform(X)
    approximation = ({"approximation": "exact"} if len(train) <= n_landmarks
                     else {"n_landmarks": n_landmarks})
    name, differs = _ENTRIES[method]
    entry = REGISTRY[name]
    if entry.estimator is None:
        pred = np.full(len(test), constant_from_labels(y[train], classify=True))
    else:
        est = entry.build({**params, "relative_alpha": relative_alpha, **approximation,
                           **differs}, classify=True)
        est.fit(Xs[train], y[train], sensitive_features=s[train])
        pred = predict_classes(entry, est, Xs[test])
    return {
        **score(pred, y[test], s[test], classify=True),
        "relative_alpha": (relative_alpha if isinstance(relative_alpha, float | int)
                           else float("nan")),
    }
