"""The FCE paper's "KM" rows of a pool of clusterings: every labeling's report as a task, then
mean ± sample std over disjoint subsets of the labelings."""

from __future__ import annotations

import sys
from typing import Any

import distributed
import numpy as np

from .._groups import check_sensitive
from .._validation import check_consistent_length, check_labels
from ..metrics import REPORT_COLUMNS, clustering_report

__all__ = ["audit_labelings", "subset_summary"]

def _report_row(
    base_labels: np.ndarray, y: np.ndarray, groups: np.ndarray, column: int, n_clusters: int
) -> np.ndarray:
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
    """The FCE report of every labeling (column of ``base_labels``), one task each: an
    array of shape (n_labelings, 7) in the order of ``REPORT_COLUMNS``. ``n_clusters``
    defaults to the number of classes, as in the FCE paper."""
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
    # fresh keys: re-scattering equal data under its content hash races with its release
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
    """Mean and sample std (ddof=1) of the subset means over ``n_subsets`` disjoint
    consecutive subsets of the labelings (``n_subsets`` divides them), as the FCE paper
    reports its rows."""
    reports = np.asarray(reports, dtype=float)
    m = reports.shape[0]
    if n_subsets < 2 or m % n_subsets:
        raise ValueError(
            f"{m} labelings cannot be split into {n_subsets} equal subsets (need >= 2 subsets "
            "that divide the number of labelings)."
        )
    subset_means = reports.reshape(n_subsets, m // n_subsets, -1).mean(axis=1)
    return subset_means.mean(axis=0), subset_means.std(axis=0, ddof=1)
