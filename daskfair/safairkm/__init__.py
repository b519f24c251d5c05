"""SAfairKM: stochastic alternating balance fair k-means and its Pareto front (Liu & Vicente).

Names are imported when first used: a fit of one estimator loads only its own modules."""

from .._lazy import lazy_names

_PUBLIC = {
    "DEFAULT_PAIRS": "front",
    "ParetoFront": "pareto",
    "SAFairKMeans": "estimator",
    "VFairKMeans": "vfairkm",
    "nondominated": "pareto",
    "pareto_front": "front",
    "sa2gd": "alternating",
    "sa2gd_front": "alternating",
    "vfairkm_front": "vfairkm",
}
__all__ = sorted(_PUBLIC)
__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
