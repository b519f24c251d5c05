"""FKR-F²E, fair kernel regression via fair feature embedding (Okray, Hu & Lan 2019)."""

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
