"""FCE: fair clustering ensemble with equal cluster capacity (Zhou et al., TPAMI 2025)."""

from .base import BASE_METHODS, base_clusterings
from .consensus import auto_fairness
from .estimator import FairClusteringEnsemble
from .selection import select_n_clusters

__all__ = [
    "BASE_METHODS",
    "FairClusteringEnsemble",
    "auto_fairness",
    "base_clusterings",
    "select_n_clusters",
]
