"""daskfair: fair machine learning at any scale with Dask.

Public names are imported lazily, so ``import daskfair`` is cheap and computes nothing.
"""

from importlib.metadata import PackageNotFoundError, version

from ._lazy import lazy_names

try:
    __version__ = version("daskfair")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

_PUBLIC = {
    "FairKernelRegressor": "fkr",
    "FairKernelClassifier": "fkr",
    "FairKernelClassifierCV": "fkr",
    "FairKernelRegressorCV": "fkr",
    "FairKernelRidge": "fkr",
    "FairClusteringEnsemble": "ensemble",
    "base_clusterings": "ensemble",
    "SAFairKMeans": "safairkm",
    "VFairKMeans": "safairkm",
    "ParetoFront": "safairkm",
    "pareto_front": "safairkm",
    "vfairkm_front": "safairkm",
    "sa2gd": "safairkm",
    "sa2gd_front": "safairkm",
    "load_dataset": "datasets",
    "load_fce_pool": "datasets",
    "make_fair_blobs": "datasets",
    "make_fair_regression": "datasets",
    "clustering_report": "metrics",
    "group_report": "metrics",
    "get_client": "runtime",
    "open_run": "store",
    "TableEncoder": "tables",
    "train_test_split": "model_selection",
    "ColumnScaler": "scaling",
    "save": "models",
    "load": "models",
    "predict_table": "models",
    "read_table": "tables",
}

__all__ = ["__version__", *_PUBLIC]
__getattr__ = lazy_names(__name__, _PUBLIC)[0]  # __dir__ below also lists __version__


def __dir__() -> list[str]:
    return sorted(__all__)
