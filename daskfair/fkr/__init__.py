"""FKR-F²E: fair kernel regression via fair feature embedding (Okray, Hu & Lan 2019), with
model selection under a disparity bound and decision-level fairness from one pass."""

from .cv import FairKernelClassifierCV, FairKernelRegressorCV
from .estimators import FairKernelClassifier, FairKernelRegressor, FairKernelRidge

__all__ = [
    "FairKernelClassifier",
    "FairKernelClassifierCV",
    "FairKernelRegressor",
    "FairKernelRegressorCV",
    "FairKernelRidge",
]
