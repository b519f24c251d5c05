"""SAfairKM: stochastic alternating balance fair k-means and its Pareto front (Liu & Vicente)."""

from .alternating import sa2gd, sa2gd_front
from .estimator import SAFairKMeans
from .front import DEFAULT_PAIRS, pareto_front
from .pareto import ParetoFront, nondominated
from .vfairkm import VFairKMeans, vfairkm_front

__all__ = [
    "DEFAULT_PAIRS",
    "ParetoFront",
    "SAFairKMeans",
    "VFairKMeans",
    "nondominated",
    "pareto_front",
    "sa2gd",
    "sa2gd_front",
    "vfairkm_front",
]
