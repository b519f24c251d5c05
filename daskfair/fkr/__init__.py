"""FKR-F²E: fair kernel regression via fair feature embedding (Okray, Hu & Lan 2019)."""

from .estimators import FairKernelClassifier, FairKernelRegressor, FairKernelRidge

__all__ = ["FairKernelClassifier", "FairKernelRegressor", "FairKernelRidge"]
