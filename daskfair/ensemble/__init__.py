"""FCE: fair clustering ensemble with equal cluster capacity (Zhou et al., TPAMI 2025).

Names are imported when first used."""

from .._lazy import lazy_names

_PUBLIC = {
    "BASE_METHODS": "base",
    "FairClusteringEnsemble": "estimator",
    "auto_fairness": "consensus",
    "base_clusterings": "base",
    "select_n_clusters": "selection",
}
__all__ = sorted(_PUBLIC)
__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
