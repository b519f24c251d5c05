"""Real data sets (docs/datasets.md), the FCE base-clustering pools and synthetic data."""

from .errors import DataIntegrityError, DataUnavailableError
from .files import cache_dir, data_dir, fetch_data, is_cache, verify_data
from .loaders import DATASETS, Dataset, list_datasets, load_dataset
from .pools import FCE_POOL_NAMES, FCE_POOLS, load_fce_pool, load_mnist_usps
from .preprocessing import preprocess_safairkm
from .synthetic import make_fair_blobs, make_fair_regression

__all__ = ["DATASETS", "FCE_POOLS", "FCE_POOL_NAMES", "DataIntegrityError", "DataUnavailableError",
           "Dataset", "cache_dir", "data_dir", "fetch_data", "is_cache", "list_datasets",
           "load_dataset", "load_fce_pool", "load_mnist_usps", "make_fair_blobs",
           "make_fair_regression", "preprocess_safairkm",
           "verify_data"]
