"""Saving a fitted model into a run store and loading it back (docs/design.md#saved-models)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ..fkr import (
    FairKernelClassifier,
    FairKernelClassifierCV,
    FairKernelRegressor,
    FairKernelRegressorCV,
    FairKernelRidge,
)
from ..fkr.statistics import Moments
from ..nystroem import NystroemMap
from ..safairkm import ParetoFront, SAFairKMeans, VFairKMeans
from ..scaling import ColumnScaler
from ..store import Run, StoreError, create_run, open_run
from ..tables import ColumnSummary, TableEncoder, TableSummary
from .tree import UnsafeModelError, decode, encode

__all__ = ["CLASSES", "MODEL_KEY", "check_model", "load", "read_model", "save",
           "write_model"]

#: Every class a saved model may hold, by its stored name: nothing else is ever looked up.
CLASSES: dict[str, type] = {c.__name__: c for c in (
    FairKernelRegressor, FairKernelClassifier, FairKernelRegressorCV, FairKernelClassifierCV,
    FairKernelRidge, SAFairKMeans, VFairKMeans, TableEncoder, ColumnScaler, TableSummary,
    ColumnSummary, NystroemMap, Moments)}
CLASSES["sklearn.pipeline.Pipeline"] = Pipeline
_NAMES = {c: name for name, c in CLASSES.items()}
#: The attribute (and the array folder) that holds a run's model.
MODEL_KEY = "model"
#: The kinds of run that hold a model.
MODEL_KINDS = ("model", "fkr", "safairkm")


def _check_saveable(model: Any) -> None:
    if type(model) not in _NAMES or not isinstance(model, BaseEstimator):
        raise TypeError(
            f"daskfair.save takes a fitted daskfair estimator, TableEncoder, ColumnScaler or a "
            f"scikit-learn Pipeline of them, got a {type(model).__name__}. For a ParetoFront, "
            "save a point: daskfair.save(front.point(i), path).")
    try:
        check_is_fitted(model)
    except NotFittedError:
        raise NotFittedError(f"this {type(model).__name__} is not fitted: call fit before "
                             "saving it.") from None


def write_model(run: Run, model: Any, key: str = MODEL_KEY) -> None:
    """Write ``model`` into ``run``: its arrays under ``key``/, its description in ``key``.

    Parameters
    ----------
    run : Run
        A run being written (it holds the lease).
    model : estimator
        A fitted model (:func:`save` lists what is accepted).
    key : str, default="model"
        The attribute and array folder.
    """
    _check_saveable(model)
    tree, arrays = encode(model, _NAMES, key)
    for path, values in arrays.items():
        run.write_array(path, values, compressed=False)
    run.set_attrs(**{key: tree})


def _array_reader(run: Run, key: str) -> Any:
    """Opens the model's arrays (under ``key``/, checked, uncompressed) by path."""
    def array(path: str) -> Any:
        if not isinstance(path, str) or not path.startswith(f"{key}/"):
            raise UnsafeModelError(f"the stored model refers to {str(path)[:80]!r}, outside "
                                   f"{key}/.")
        try:
            return run.array(path, compressed=False)
        except KeyError:
            raise StoreError(f"the model in {run.path} refers to the array {path!r}, which the "
                             "store does not hold: it is incomplete. Save the model again."
                             ) from None
    return array


def check_model(run: Run, key: str = MODEL_KEY) -> None:
    """Check the model stored in ``run`` as :func:`read_model` does, without reading its
    arrays' values (``daskfair show``).

    Parameters
    ----------
    run : Run
    key : str, default="model"

    Raises
    ------
    StoreError, UnsafeModelError
        As :func:`read_model`.
    """
    decode(run.attrs.get(key), CLASSES, _array_reader(run, key), build=False)


def read_model(run: Run, key: str = MODEL_KEY) -> Any:
    """The model :func:`write_model` stored in ``run`` under ``key``.

    Parameters
    ----------
    run : Run
        A finished run, opened for reading and checked against its manifest
        (``open_run(path, verify="contents")``).
    key : str, default="model"

    Returns
    -------
    estimator

    Raises
    ------
    StoreError
        The run holds no model, or refers to an array it does not hold.
    UnsafeModelError
        The description names a class daskfair does not save, or is malformed.
    """
    tree = run.attrs.get(key)
    if tree is None:
        raise StoreError(f"{run.path} holds a {run.kind} run with no model in it.")
    return decode(tree, CLASSES, _array_reader(run, key))


def save(model: Any, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Save a fitted model as arrays and JSON in a zarr store (no pickle).

    Parameters
    ----------
    model : estimator
        A fitted FairKernelRegressor, FairKernelClassifier, their CV classes, FairKernelRidge,
        SAFairKMeans (a front's point: ``front.point(i)``), VFairKMeans, TableEncoder,
        ColumnScaler, or a scikit-learn ``Pipeline`` of them.
    path : path-like
        A new directory (or an empty one); with ``overwrite``, a saved model to replace.
    overwrite : bool, default=False
        Replace a model saved at ``path``. Anything else there is never replaced.

    Returns
    -------
    pathlib.Path
        The store's absolute path.

    Raises
    ------
    TypeError, NotFittedError
        ``model`` is not a fitted model daskfair saves.
    FileExistsError
        ``path`` holds something else, or a model and ``overwrite`` is False.

    Examples
    --------
    >>> import pathlib, tempfile, numpy as np, daskfair
    >>> X, y, s = (np.asarray(a) for a in daskfair.make_fair_regression(300, 3, random_state=0))
    >>> reg = daskfair.FairKernelRegressor(n_landmarks=50, random_state=0)
    >>> reg = reg.fit(X, y, sensitive_features=s)
    >>> path = daskfair.save(reg, pathlib.Path(tempfile.mkdtemp()) / "reg.zarr")
    >>> bool((daskfair.load(path).predict(X) == reg.predict(X)).all())
    True
    """
    _check_saveable(model)
    run = create_run(path, kind="model", params={"class": _NAMES[type(model)]},
                     overwrite="model" if overwrite else False)
    try:
        write_model(run, model)
        run.mark_complete()
    finally:
        run.close()
    return run.path


def load(path: str | os.PathLike[str], *, front_point: int | None = None,
         balance: float | None = None, digest: str | None = None) -> Any:
    """Load a model saved by :func:`save`, or the model of a finished ``fkr``/``safairkm`` run.

    The store's files are checked against its manifest first; no code is run and no module
    imported that the store names, and every part of the model is checked against what its
    class holds (docs/design.md#saved-models). The manifest guards against damage, not
    against someone who edits a model and writes a new manifest: ``digest`` checks that the
    store is the one its sender published.

    Parameters
    ----------
    path : path-like
        The store.
    front_point : int, default=None
        For a SAfairKM run: the point of its front (0 is the lowest cost).
    balance : float, default=None
        For a SAfairKM run: the point whose balance is closest to this one.
    digest : str, default=None
        The digest the store must have (``daskfair show`` prints it; :attr:`Run.digest`).

    Returns
    -------
    estimator
        The fitted model (a ``Pipeline`` with the run's encoder and scaling for a run).

    Raises
    ------
    StoreError, CorruptStoreError, IncompleteRunError
        No finished run at ``path``, a changed file, a run without a model, or another
        digest than ``digest``.
    UnsafeModelError
        The store describes something daskfair does not save.
    ValueError
        A SAfairKM run without one of ``front_point`` and ``balance``.
    """
    run = open_run(path, verify="contents")  # every file, once, before anything is read
    if digest is not None and run.digest != digest:
        raise StoreError(f"{run.path} has the digest {run.digest}, not {digest!r}: it is not "
                         "the model its sender published (or was changed since).")
    if run.kind not in MODEL_KINDS:
        raise StoreError(
            f"{run.path} holds a {run.kind!r} run, which has no model for new rows; models "
            f"come from daskfair.save and the fkr and safairkm commands.")
    if run.kind != "safairkm":
        if front_point is not None or balance is not None:
            raise ValueError(f"{run.path} holds one model: front_point= and balance= are for "
                             "SAfairKM runs.")
        return read_model(run)
    front = ParetoFront.from_store(run.path)
    point = front.point(front.index(front_point=front_point, balance=balance))
    if MODEL_KEY not in run.attrs:
        return point
    return Pipeline([*read_model(run).steps, ("model", point)])
