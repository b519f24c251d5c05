"""Audit a pool of clusterings: every labeling's FCE report as a task on the cluster.

The FCE paper's "KM" rows summarise a pool of base clusterings: the seven metrics of
:func:`daskfair.metrics.clustering_report` for each labeling, averaged within 10 disjoint
subsets of 10 labelings, then mean ± sample standard deviation over the subsets.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import distributed
import numpy as np

from .._groups import check_sensitive
from .._validation import check_consistent_length, check_labels
from ..metrics import REPORT_COLUMNS, clustering_report

__all__ = ["audit_labelings", "subset_summary"]

logger = logging.getLogger(__name__)


def _report_row(
    base_labels: np.ndarray, y: np.ndarray, groups: np.ndarray, column: int, n_clusters: int
) -> np.ndarray:
    # One task: the FCE report of one labeling, as a row of REPORT_COLUMNS.
    report = clustering_report(
        y, base_labels[:, column], sensitive_features=groups, n_clusters=n_clusters
    )
    return np.array([report[k] for k in REPORT_COLUMNS])


def audit_labelings(
    base_labels: Any,
    y: Any,
    *,
    sensitive_features: Any,
    n_clusters: int | None = None,
    client: distributed.Client | None = None,
    progress: bool = False,
) -> np.ndarray:
    """The FCE report of every labeling in a pool, one task per labeling.

    Parameters
    ----------
    base_labels : array-like of shape (n_samples, n_labelings)
        Integer cluster labels, one column per labeling.
    y : array-like of shape (n_samples,)
        True classes (integer codes).
    sensitive_features : array-like of shape (n_samples,)
        Protected group of every row.
    n_clusters : int, optional
        The c of the metrics (default: the number of true classes, as in the FCE paper).
    client : distributed.Client, optional
        Where the tasks run (default: :func:`daskfair.runtime.clients.get_client`).
    progress : bool
        Show Dask's progress bar while the tasks run (command line use; only when standard
        output is a terminal, since in a log or a file the bar's redraws are noise).

    Returns
    -------
    ndarray of shape (n_labelings, 7)
        Columns in the order of :data:`daskfair.metrics.REPORT_COLUMNS`.
    """
    from ..runtime.clients import get_client

    base_labels = np.asarray(base_labels)
    if base_labels.ndim != 2:
        raise ValueError(
            f"base_labels must be 2-D (n_samples, n_labelings), got shape {base_labels.shape}."
        )
    n = check_consistent_length(("base_labels", base_labels), ("y", np.asarray(y)))
    y = check_labels(np.asarray(y), n, name="y")
    groups, _ = check_sensitive(sensitive_features, n)
    base_labels = check_labels(base_labels.ravel(), name="base_labels").reshape(
        base_labels.shape
    )
    if n_clusters is None:
        n_clusters = int(np.unique(y).size)
    client = client or get_client()
    # Scatter the pool once (fresh keys: re-scattering equal data under its content hash
    # races with the release of an earlier scatter); every task reads its column from it.
    pool_f, y_f, g_f = client.scatter([base_labels, y, groups], broadcast=True, hash=False)
    futures = client.map(
        _report_row,
        [pool_f] * base_labels.shape[1],
        [y_f] * base_labels.shape[1],
        [g_f] * base_labels.shape[1],
        range(base_labels.shape[1]),
        [n_clusters] * base_labels.shape[1],
        key=[f"daskfair-audit-{i}-{pool_f.key}" for i in range(base_labels.shape[1])],
    )
    if progress and sys.stdout.isatty():  # the bar redraws one line: terminals only
        distributed.progress(futures)
    rows = client.gather(futures)
    return np.vstack(rows)


def subset_summary(reports: np.ndarray, n_subsets: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample std over ``n_subsets`` disjoint consecutive subsets of the labelings.

    Each subset's metrics are averaged; the result is the mean of those averages (equal to the
    mean over all labelings) and their sample standard deviation (``ddof=1``), as the FCE
    paper reports its rows.

    Parameters
    ----------
    reports : ndarray of shape (n_labelings, n_metrics)
    n_subsets : int
        Must divide ``n_labelings``.

    Returns
    -------
    mean, std : ndarray of shape (n_metrics,)
    """
    reports = np.asarray(reports, dtype=float)
    m = reports.shape[0]
    if n_subsets < 2 or m % n_subsets:
        raise ValueError(
            f"{m} labelings cannot be split into {n_subsets} equal subsets (need >= 2 subsets "
            "that divide the number of labelings)."
        )
    subset_means = reports.reshape(n_subsets, m // n_subsets, -1).mean(axis=1)
    return subset_means.mean(axis=0), subset_means.std(axis=0, ddof=1)
