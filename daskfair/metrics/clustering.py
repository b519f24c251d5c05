"""Clustering metrics; notation: ``D_tk = |G_t ∩ π_k|`` (groups × clusters)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.optimize
import scipy.stats

from .._blocks import block_sum
from .._groups import sensitive_column
from .._keyed import Keyed, arrange, column_values, local_codes, merge
from .._validation import check_array, is_dask
from ._counts import SizeOf, count_table, group_cluster, label_codes, nonempty_labels

__all__ = ["REPORT_COLUMNS", "balance", "cce", "clustering_accuracy", "clustering_report",
           "contingency", "fairness_cce", "hypervolume_2d", "kmeans_cost", "mnce", "nmi",
           "normalized_entropy"]

#: Columns of :func:`clustering_report`, in the FCE paper's order.
REPORT_COLUMNS = ("ACC", "NMI", "Bal", "MNCE", "CCE", "NE", "f_CCE")


def contingency(a: Any, b: Any, *, n_labels_a: int | None = None,
                n_labels_b: int | None = None) -> np.ndarray:
    """Counts table ``T[i, j] = |{rows: a = i, b = j}|`` of two label vectors (one pass).

    Parameters
    ----------
    a, b : array-like or dask array of shape (n_samples,)
        Labels 0, 1, 2, ...
    n_labels_a, n_labels_b : int, default=None
        Number of labels of ``a`` and ``b`` (None: the largest label + 1).

    Returns
    -------
    ndarray of shape (n_labels_a, n_labels_b), int64

    Examples
    --------
    >>> contingency([0, 0, 1, 1], [0, 1, 1, 1])
    array([[1, 1],
           [0, 2]])
    """
    a = nonempty_labels(a, "a")
    b = nonempty_labels(b, "b", a.shape[0])
    return count_table(("a", a, n_labels_a), ("b", b, n_labels_b))[0]


def _cost_block(X: np.ndarray, labels: np.ndarray, shift: np.ndarray) -> Keyed:
    """Block function: per distinct label, the count, Σ x and Σ ‖x‖² of the shifted rows."""
    codes, keys = local_codes(labels)
    X = X - shift
    k = len(keys)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, codes, X)
    sq = np.bincount(codes, weights=np.einsum("ij,ij->i", X, X), minlength=k)
    return Keyed(keys, (counts, sums, sq))


def kmeans_cost(X: Any, labels: Any) -> float:
    """k-means cost with exact cluster means (the SAfairKM paper's f1, eq. 2).

    ``f1 = (1/N) Σ_k Σ_{p ∈ C_k} ‖x_p − c̄_k‖²``, ``c̄_k`` the mean of cluster k's points.

    Parameters
    ----------
    X : array-like or dask array of shape (n_samples, n_features)
        The points, finite.
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every point, 0, 1, 2, ...

    Returns
    -------
    float

    Examples
    --------
    >>> kmeans_cost([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    1.0
    """
    X = check_array(X, "X")
    labels = nonempty_labels(labels, "labels", X.shape[0])
    first = X[:1]
    shift = np.asarray(first.compute() if is_dask(first) else first)[0]
    keyed = block_sum(_cost_block, X, labels, shift=shift, combine=merge)
    codes, k = label_codes(column_values(keyed.keys, 0), "labels", X.shape[0])
    counts, sums, sq = arrange(keyed, [codes], (k,))
    used = counts > 0
    within = sq[used] - (sums[used] ** 2).sum(axis=1) / counts[used]
    return float(max(within.sum(), 0.0) / counts.sum())


def balance(labels: Any, *, sensitive_features: Any, n_clusters: int | None = None) -> float:
    """Balance ``min_k min_t D_tk / max_t D_tk`` over non-empty clusters (SAfairKM f2, FCE Bal).

    Parameters
    ----------
    labels : array-like or dask array of shape (n_samples,)
        Cluster of every row, 0, 1, 2, ...
    sensitive_features : array-like or dask array of shape (n_samples,)
        Group of every row (at least two groups).
    n_clusters : int, default=None
        Number of clusters (None: the largest label + 1).

    Returns
    -------
    float

    Examples
    --------
    >>> balance([0, 0, 0, 1, 1, 1], sensitive_features=[0, 1, 1, 0, 1, 1])
    0.5
    """
    return _balance(group_cluster(labels, sensitive_features, n_clusters))


def _balance(D: np.ndarray) -> float:
    """Balance of a groups × clusters count table, over its non-empty clusters."""
    D = D[:, D.sum(axis=0) > 0].astype(np.float64)
    return float((D.min(axis=0) / D.max(axis=0)).min())


def _accuracy(C: np.ndarray) -> float:
    """ACC of a classes × clusters count table (Hungarian matching)."""
    rows, cols = scipy.optimize.linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].sum() / C.sum())


def _entropy(p: np.ndarray) -> float:
    """Entropy of counts (scipy normalises them), natural log; no −0.0 for one category."""
    return max(float(scipy.stats.entropy(p)), 0.0)


def _nmi(C: np.ndarray) -> float:
    """NMI of a classes × clusters count table."""
    # mutual_info_score takes the count table itself: no second pass over the labels (imported
    # here: sklearn.metrics takes 0.1 s to import, which a fit that reports nothing never needs)
    from sklearn.metrics import mutual_info_score
    h_true, h_pred = _entropy(C.sum(axis=1)), _entropy(C.sum(axis=0))
    if h_true == 0 and h_pred == 0:
        return 1.0  # both constant: identical partitions (scikit-learn's convention)
    return mutual_info_score(None, None, contingency=C) / max(h_true, h_pred)


def _mnce(D: np.ndarray) -> float:
    """MNCE of a groups × clusters count table."""
    h = _entropy(D.sum(axis=1))
    if h == 0:
        return 1.0
    return min(_entropy(D[:, k]) for k in range(D.shape[1]) if D[:, k].sum()) / h


def _cce(sizes: np.ndarray) -> float:
    """CCE of the cluster sizes."""
    return float(sizes.min() / sizes.max())


def _ne(sizes: np.ndarray, c: int) -> float:
    """NE of the cluster sizes, normalised by log c."""
    return float(_entropy(sizes) / np.log(c)) if c > 1 else 1.0


def _fairness_cce(D: np.ndarray) -> float:
    """fairness_CCE of a groups × clusters count table."""
    c = D.shape[1]
    gamma = D / D.sum(axis=1, keepdims=True)  # γ_tk = D_tk / |G_t|
    with np.errstate(divide="ignore"):
        ratio = np.minimum(c * gamma, 1.0 / (c * gamma))
    return float(np.nan_to_num(ratio, nan=0.0).min())


def clustering_accuracy(y_true: Any, labels: Any) -> float:
    """ACC: accuracy after the best one-to-one matching of clusters to classes (Hungarian).

    Parameters
    ----------
    y_true, labels : array-like or dask array of shape (n_samples,)
        True classes and clusters, 0, 1, 2, ...

    Returns
    -------
    float

    Examples
    --------
    >>> clustering_accuracy([0, 0, 1, 1], [1, 1, 0, 1])
    0.75
    """
    return _accuracy(contingency(y_true, labels))


def nmi(y_true: Any, labels: Any) -> float:
    """NMI = I(Y; Ŷ) / max(H(Y), H(Ŷ)), scikit-learn's with ``average_method="max"`` (FCE's).

    Parameters
    ----------
    y_true, labels : as in :func:`clustering_accuracy`.

    Returns
    -------
    float
    """
    return _nmi(contingency(y_true, labels))


def mnce(labels: Any, *, sensitive_features: Any) -> float:
    """MNCE = ``min_k H(G | π_k) / H(G)`` over non-empty clusters, in [0, 1] (FCE paper).

    Parameters
    ----------
    labels, sensitive_features : as in :func:`balance`.

    Returns
    -------
    float
    """
    return _mnce(group_cluster(labels, sensitive_features, None))


def cce(labels: Any, *, n_clusters: int | None = None) -> float:
    """CCE = ``min_k |π_k| / max_k |π_k|``, in [0, 1] (FCE paper, Definition 2).

    Parameters
    ----------
    labels : as in :func:`balance`.
    n_clusters : int, default=None
        Number of clusters (None: the largest label + 1); a label never seen gives 0.

    Returns
    -------
    float

    Examples
    --------
    >>> cce([0, 0, 0, 1])
    0.3333333333333333
    """
    labels = nonempty_labels(labels, "labels")
    return _cce(count_table(("labels", labels, n_clusters))[0])


def normalized_entropy(labels: Any, *, n_clusters: int | None = None) -> float:
    """NE = ``−(1/log c) Σ_k p_k log p_k``, ``p_k = |π_k| / n`` (FCE paper); 1 for equal sizes.

    Parameters
    ----------
    labels : as in :func:`balance`.
    n_clusters : int, default=None
        c (None: the number of distinct labels; the FCE paper uses the number of classes).

    Returns
    -------
    float
    """
    labels = nonempty_labels(labels, "labels")
    sizes = count_table(("labels", labels, n_clusters))[0]
    c = n_clusters if n_clusters is not None else int((sizes > 0).sum())
    return _ne(sizes, c)


def fairness_cce(labels: Any, *, sensitive_features: Any,
                 n_clusters: int | None = None) -> float:
    """fairness_CCE = ``min_tk min(c γ_tk, 1 / (c γ_tk))``, ``γ_tk = D_tk / |G_t|`` (FCE Def. 3).

    Parameters
    ----------
    labels, sensitive_features, n_clusters : as in :func:`balance` (``n_clusters`` is c).

    Returns
    -------
    float
    """
    return _fairness_cce(group_cluster(labels, sensitive_features, n_clusters))


def clustering_report(y_true: Any, labels: Any, *, sensitive_features: Any,
                      n_clusters: int | None = None) -> dict[str, float]:
    """The FCE paper's seven columns (ACC, NMI, Bal, MNCE, CCE, NE, f_CCE), from one pass.

    Parameters
    ----------
    y_true, labels, sensitive_features : as in :func:`clustering_accuracy` and :func:`balance`.
    n_clusters : int, default=None
        c of CCE, NE and f_CCE (None: the number of classes, as in the FCE paper).

    Returns
    -------
    dict of str to float
        The metrics by :data:`REPORT_COLUMNS`.

    Examples
    --------
    >>> report = clustering_report([0, 0, 1, 1], [0, 0, 1, 1], sensitive_features=[0, 1, 0, 1])
    >>> {name: round(value, 3) for name, value in report.items()}
    {'ACC': 1.0, 'NMI': 1.0, 'Bal': 1.0, 'MNCE': 1.0, 'CCE': 1.0, 'NE': 1.0, 'f_CCE': 1.0}
    """
    y_true = nonempty_labels(y_true, "y_true")
    labels = nonempty_labels(labels, "labels", y_true.shape[0])
    s = sensitive_column(sensitive_features, y_true.shape[0])
    table, (_, clusters, _) = count_table(
        ("y_true", y_true, None),
        ("labels", labels, SizeOf(0) if n_clusters is None else n_clusters),
        ("sensitive_features", s, "groups"))
    c = len(clusters)
    C = table.sum(axis=2)  # classes × clusters
    D = table.sum(axis=0).T  # groups × clusters
    sizes = C.sum(axis=0)
    return {"ACC": _accuracy(C), "NMI": _nmi(C), "Bal": _balance(D), "MNCE": _mnce(D),
            "CCE": _cce(sizes), "NE": _ne(sizes, c), "f_CCE": _fairness_cce(D)}


def hypervolume_2d(cost: Any, balance: Any, reference: tuple[float, float]) -> float:
    """Area dominated by a front (cost minimised, balance maximised) inside the reference box.

    Parameters
    ----------
    cost, balance : array-like of shape (n_points,)
        The points' cost and balance, finite.
    reference : (float, float)
        ``(r_cost, r_balance)``: the box's largest cost and smallest balance.

    Returns
    -------
    float

    Examples
    --------
    >>> hypervolume_2d([1.0, 2.0], [0.5, 1.0], reference=(3.0, 0.0))
    1.5
    """
    f1 = np.asarray(cost, dtype=np.float64).ravel()
    f2 = np.asarray(balance, dtype=np.float64).ravel()
    if f1.shape != f2.shape:
        raise ValueError(f"cost and balance have different lengths ({f1.size}, {f2.size}).")
    if not (np.isfinite(f1).all() and np.isfinite(f2).all()):
        raise ValueError("cost and balance must be finite.")
    r1, r2 = map(float, reference)
    inside = (f1 < r1) & (f2 > r2)
    order = np.lexsort((-f2[inside], f1[inside]))
    xs, ys = f1[inside][order], f2[inside][order]
    area, best = 0.0, r2
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if y > best:
            best = y
        nxt = xs[i + 1] if i + 1 < len(xs) else r1
        area += (nxt - x) * (best - r2)
    return float(area)
