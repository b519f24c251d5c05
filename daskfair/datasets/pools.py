"""The FCE paper's data: the authors' base-clustering pools and MNIST-USPS."""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np
import pandas as pd

from .._random import as_seed_sequence
from . import files
from .files import checked_file
from .loaders import Dataset, encode, make_dataset

__all__ = ["FCE_POOLS", "FCE_POOL_NAMES", "load_fce_pool", "load_mnist_usps"]

FCE_POOLS = ("ds", "har", "mnist_usps", "reverse_mnist", "jaffe", "yale")
FCE_POOL_NAMES = {"ds": "D&S", "har": "HAR", "mnist_usps": "MNIST-USPS",
                  "reverse_mnist": "Reverse MNIST", "jaffe": "JAFFE", "yale": "Yale"}


def load_fce_pool(name: str, data_dir: str | os.PathLike[str] | None = None,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One of the FCE authors' base-clustering pools.

    Parameters
    ----------
    name : str
        One of :data:`FCE_POOLS`.
    data_dir : as in :func:`load_dataset`.

    Returns
    -------
    base_labels : ndarray of shape (n_samples, 100), int64
        Cluster of every row in every base clustering.
    y : ndarray of shape (n_samples,), int64
        True classes, 0-based.
    groups : ndarray of shape (n_samples,), int64
        Protected groups, 0-based.

    Raises
    ------
    FileNotFoundError, DataUnavailableError, DataIntegrityError
        As for :func:`load_dataset`.

    Examples
    --------
    >>> base, y, groups = load_fce_pool("har")
    >>> base.shape, len(set(y)), len(set(groups))
    ((10299, 100), 6, 30)
    """
    import scipy.io

    if name not in FCE_POOLS:
        raise ValueError(f"unknown FCE pool {name!r}; choose one of {list(FCE_POOLS)}.")
    path = checked_file(files.data_dir(data_dir), f"fce_pools/bc_pool_{name}.mat")
    try:
        mat = scipy.io.loadmat(path)
        cells, y, g = mat["bac_Y"], mat["y"].ravel(), mat["g"].ravel()
    except Exception as exc:
        raise ValueError(f"{path} is corrupt or not an FCE pool ({exc}).") from exc
    n = y.size
    columns = []
    for j in range(cells.size):
        onehot = np.asarray(cells.flat[j])
        if onehot.ndim != 2 or onehot.shape[0] != n or not (onehot.sum(axis=1) == 1).all():
            raise ValueError(f"{path}: base clustering {j} is not an n × c one-hot matrix; "
                             "the file is corrupt or not an FCE pool.")
        columns.append(onehot.argmax(axis=1))
    return (np.column_stack(columns).astype(np.int64), encode(y)[0], encode(g)[0])


def load_mnist_usps(data_dir: str | os.PathLike[str] | None = None, *, n_mnist: int = 2000,
                    n_usps: int = 1800, random_state: Any = 0) -> Dataset:
    """MNIST-USPS as in the FCE paper: MNIST test digits resized to 16 × 16 and USPS digits.

    Digits drawn without replacement; group = source (0 MNIST, 1 USPS), y = digit.

    Parameters
    ----------
    data_dir : as in :func:`load_dataset`.
    n_mnist : int, default=2000
        Digits drawn from MNIST.
    n_usps : int, default=1800
        Digits drawn from USPS.
    random_state : int, RandomState, Generator, SeedSequence or None, default=0
        Seeds the draw.

    Returns
    -------
    Dataset
        ``X`` of shape (n_mnist + n_usps, 256) in [-1, 1].

    Raises
    ------
    FileNotFoundError, DataUnavailableError, DataIntegrityError
        As for :func:`load_dataset`.
    """
    from scipy.ndimage import zoom

    root = files.data_dir(data_dir)
    with gzip.open(checked_file(root, "mnist/t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(checked_file(root, "mnist/t10k-labels-idx1-ubyte.gz")) as f:
        digits = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    usps = pd.read_csv(checked_file(root, "usps/zip.train.gz"), sep=r"\s+",
                       header=None).to_numpy()
    rng = np.random.default_rng(as_seed_sequence(random_state))
    pick_m = np.sort(rng.choice(len(images), n_mnist, replace=False))
    pick_u = np.sort(rng.choice(len(usps), n_usps, replace=False))
    small = np.stack([zoom(im.astype(np.float64), 16 / 28, order=1) for im in images[pick_m]])
    mnist = small.reshape(n_mnist, 256) / 255.0 * 2.0 - 1.0
    X = np.vstack([mnist, usps[pick_u, 1:]])
    y = np.concatenate([digits[pick_m], usps[pick_u, 0].astype(np.int64)])
    s = np.repeat([0, 1], [n_mnist, n_usps])
    return make_dataset("mnist_usps", X, y, s, "source", [f"px{i}" for i in range(256)],
                        "MNIST test digits resized to 16 × 16 + USPS training digits")
