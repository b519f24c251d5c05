"""The FCE paper's evaluation on a pool: a consensus of each of ``n_subsets`` disjoint
subsets of the base clusterings (one task each), reported as the paper prints its rows."""

from __future__ import annotations

from typing import Any

import distributed
import numpy as np

from ...ensemble.estimator import FairClusteringEnsemble
from ...metrics import REPORT_COLUMNS, clustering_report

__all__ = ["VARIANTS", "pool_rows", "subset_report"]

#: The paper's FCE and its two ablations.
VARIANTS: dict[str, dict[str, Any]] = {
    "FCE": {"alignment": "rotation"},
    "FCE-f": {"alignment": "rotation", "fairness_weight": 0.0},
    "FCE-a": {"alignment": "hungarian"},
}


def subset_report(
    base: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    subset: int,
    *,
    n_subsets: int = 10,
    **params: Any,
) -> np.ndarray:
    """The seven ``REPORT_COLUMNS`` of subset ``subset``'s consensus, its ``n_iter_`` and
    its ``fairness_weight_``: shape (9,)."""
    size = base.shape[1] // n_subsets
    cols = slice(size * subset, size * (subset + 1))
    c = int(np.unique(y).size)
    est = FairClusteringEnsemble(c, random_state=subset, **params)
    labels = est.fit_predict(base[:, cols], sensitive_features=groups)
    report = clustering_report(y, labels, sensitive_features=groups, n_clusters=c)
    return np.array([report[k] for k in REPORT_COLUMNS] + [est.n_iter_, est.fairness_weight_])


def pool_rows(
    client: distributed.Client,
    base: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    *,
    variants: dict[str, dict[str, Any]] = VARIANTS,
    fairness_weight: float | str = "auto",
    n_subsets: int = 10,
    key: str = "pool",
) -> dict[str, np.ndarray]:
    """``{variant: (n_subsets, 9) array of subset_report rows}`` for one pool."""
    pool = client.scatter([base, y, groups], broadcast=True, hash=False)
    futures = {
        (variant, s): client.submit(
            subset_report, *pool, s, n_subsets=n_subsets,
            **{"fairness_weight": fairness_weight, **params},
            key=f"daskfair-fce-{key}-{variant}-{s}-{pool[0].key}",
        )
        for variant, params in variants.items()
        for s in range(n_subsets)
    }
    done = dict(zip(futures, client.gather(list(futures.values())), strict=True))
    return {v: np.stack([done[(v, s)] for s in range(n_subsets)]) for v in variants}
