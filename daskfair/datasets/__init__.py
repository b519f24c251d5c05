"""The real data sets, the FCE base-clustering pools and seeded synthetic data of any size.

Files are read from the data directory (:func:`data_dir`) and, in a cache, downloaded from
their publishers with checksums (:mod:`.fetch`, the registry :mod:`.sources`).
"""

from .errors import DataIntegrityError, DataUnavailableError
from .loaders import (
    DATASETS,
    FCE_POOL_NAMES,
    FCE_POOLS,
    Dataset,
    cache_dir,
    data_dir,
    fetch_data,
    is_cache,
    list_datasets,
    load_dataset,
    load_fce_pool,
    load_mnist_usps,
    make_fair_blobs,
    make_fair_regression,
    minmax_scale,
    preprocess_safairkm,
    standard_scale,
    verify_data,
)

__all__ = [
    "DATASETS",
    "FCE_POOLS",
    "FCE_POOL_NAMES",
    "DataIntegrityError",
    "DataUnavailableError",
    "Dataset",
    "cache_dir",
    "data_dir",
    "fetch_data",
    "is_cache",
    "list_datasets",
    "load_dataset",
    "load_fce_pool",
    "load_mnist_usps",
    "make_fair_blobs",
    "make_fair_regression",
    "minmax_scale",
    "preprocess_safairkm",
    "standard_scale",
    "verify_data",
]
