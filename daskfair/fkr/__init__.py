"""FKR-F²E: fair kernel regression via fair feature embedding (Okray, Hu & Lan 2019), with
model selection under a disparity bound and decision-level fairness (every candidate and fold
from one pass over the data, plus one scoring pass for the classifier)."""

from .cv import FairKernelClassifierCV, FairKernelRegressorCV
from .estimators import FairKernelClassifier, FairKernelRegressor
from .fkrr import FairKernelRidge

__all__ = [
    "FairKernelClassifier",
    "FairKernelClassifierCV",
    "FairKernelRegressor",
    "FairKernelRegressorCV",
    "FairKernelRidge",
]
