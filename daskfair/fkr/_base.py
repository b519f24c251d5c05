"""What every FKR-F²E estimator shares: checks, the Nyström map, the pass, the kernel output."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, replace
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .._groups import (
    GROUP_SIZE,
    encode_groups,
    group_column,
    is_missing,
    sorted_groups,
)
from .._keyed import column_values
from .._params import Integer, Nothing, Options, Real, Seed, Spec, shown
from .._validation import (
    as_array,
    check_array,
    check_consistent_length,
    check_feature_names,
    check_sample_weight,
    column_or_1d,
    feature_names,
    is_dask,
)
from ..kernels import KERNELS, MAX_DEGREE, kernel_params
from ..nystroem import LANDMARK_METHODS, NystroemMap, fit_nystroem
from .folds import FoldPlan
from .statistics import FoldedMoments, arrange_moments, cell_moments

__all__ = ["ABSENT", "APPROXIMATIONS", "KERNEL", "NYSTROEM", "FitInput", "KernelModelMixin",
           "binary_classes", "check_kernel", "class_column", "input_attributes"]

logger = logging.getLogger(__name__)

APPROXIMATIONS = ("nystroem", "exact")

#: The value of a fitted attribute that removes it (:meth:`KernelModelMixin._set_fitted`).
ABSENT = object()


@dataclass(frozen=True)
class FitInput:
    """Checked training data; ``s``, ``labels``: the raw group and class columns, ``y`` numeric."""

    X: Any
    y: Any
    weights: Any
    s: Any
    labels: Any
    n: int
    names: np.ndarray | None = None
    groups: np.ndarray | None = None
    classes: np.ndarray | None = None
    known: bool = False
    merged: dict[str, int] | None = None

    @property
    def classify(self) -> bool:
        return self.labels is not None

    @property
    def n_groups(self) -> int:
        return 1 if self.groups is None else len(self.groups)

    @property
    def cell_group(self) -> np.ndarray:
        groups = np.arange(self.n_groups)
        return np.repeat(groups, 2) if self.classify else groups

    @property
    def cell_label(self) -> np.ndarray:
        return np.tile([0, 1], self.n_groups) if self.classify else np.full(self.n_groups, -1)

    def _one_group(self) -> Any:
        if is_dask(self.X):
            return da.zeros(self.n, dtype=np.int64, chunks=self.X.chunks[0])
        return np.zeros(self.n, dtype=np.int64)

    @property
    def cells(self) -> Any:
        """Cell code of every row (lazy for dask): group, or group × class."""
        codes = self._one_group() if self.s is None else encode_groups(self.s, self.groups)
        return codes * 2 + self.y.astype(np.int64) if self.classify else codes

    def columns(self) -> list[Any]:
        """The raw columns whose distinct values are the cells."""
        s = self._one_group() if self.s is None else self.s
        return [s] if self.labels is None else [s, self.labels]

    def with_values(self, groups: np.ndarray | None, classes: np.ndarray | None) -> FitInput:
        """This input with its groups and classes known (the classifier's y coded 0/1)."""
        y = self.y if classes is None else (self.labels == classes[1]).astype(np.float64)
        return replace(self, groups=groups, classes=classes, y=y, known=True)


def class_column(y: Any) -> Any:
    """y as a 1-D column of class labels (shape checks only; the classes come later)."""
    if y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None.")
    y = column_or_1d(as_array(y, "y"), "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D class labels, got shape {y.shape}.")
    return y


def binary_classes(values: Any, dtype: Any = None) -> np.ndarray:
    """The two sorted classes from the distinct values of y, or an error that says why not."""
    values = list(values)
    if any(is_missing(v) for v in values):
        raise ValueError("y contains missing values; every training row needs a class.")
    try:
        classes = np.unique(np.asarray(values, dtype=dtype if dtype is not None else object))
    except TypeError:
        raise TypeError("y mixes class labels that cannot be sorted (e.g. strings and "
                        "numbers); give every class as one type, e.g. `y.astype(str)`.") from None
    if classes.size != 2:
        raise ValueError(
            "Only binary classification is supported: the classifier needs exactly two "
            f"classes in y, got {classes.size} class(es) ({classes.tolist()[:10]}). Use "
            "FairKernelRegressor for a continuous target.")
    return classes


def _resolve(data: FitInput, values: list[Any]) -> FitInput:
    """``data`` with its groups and classes checked and known, from their raw values."""
    if data.known:
        return data
    groups = None if data.s is None else sorted_groups(values[0], data.s.dtype)
    classes = None if data.labels is None else binary_classes(values[1], data.labels.dtype)
    return data.with_values(groups, classes)


def _check_moments(total: Any, data: FitInput) -> None:
    """Both classes, every group and some weight in the training rows' moments, and finite
    sums of y (the solvers and the validation errors use Σ y z, Σ y and Σ y²)."""
    if not all(np.isfinite(v).all() for v in (total.sum_y, total.sum_yy, total.fy)):
        raise ValueError("y is too large for its sums over the rows (Σ y, Σ y²) to be "
                         "finite numbers: rescale y (e.g. divide it by its standard "
                         "deviation) and the predictions back.")
    if data.classify:
        weight = np.bincount(data.cell_label, weights=total.counts, minlength=2)
        if (weight == 0).any():
            raise ValueError(
                f"class {shown(data.classes[int(np.argmin(weight))])} has no rows with a "
                "positive weight: the classifier needs both classes.")
    if data.groups is not None:
        empty = np.flatnonzero(total.group_counts == 0)
        if empty.size:
            raise ValueError(
                f"group {shown(data.groups[empty[0]])} has no rows with a positive weight "
                "in the training data; every group must be present.")
    if not total.n > 0:
        raise ValueError("every sample weight is 0: at least one row needs a positive weight.")


#: The kernel's parameters (``gamma`` apart: CV estimators search a grid of it).
KERNEL: dict[str, list[Spec]] = {"kernel": [Options(tuple(KERNELS))],
                                 "degree": [Integer(1, MAX_DEGREE)], "coef0": [Real()]}
#: The Nyström map's, the seed's and the groups' parameters.
NYSTROEM: dict[str, list[Spec]] = {
    "approximation": [Options(APPROXIMATIONS)], "n_landmarks": [Integer(1)],
    "landmarks": [Options(LANDMARK_METHODS)], "rcond": [Real(1e-15, 1, high_open=True)],
    "random_state": [Nothing, Seed], **GROUP_SIZE}


def check_kernel(p: dict[str, Any], gamma: Any) -> None:
    """The kernel's parameters together (a positive ``gamma`` for rbf)."""
    kernel_params(p["kernel"], 1, gamma=gamma, degree=p["degree"], coef0=p["coef0"])


def input_attributes(data: FitInput, feature_map: NystroemMap | None) -> dict[str, Any]:
    """The fitted attributes that describe the training input."""
    out = {"n_features_in_": data.X.shape[1],
           "feature_names_in_": ABSENT if data.names is None else data.names,
           "groups_": data.groups, "merged_groups_": dict(data.merged or {})}
    if data.classes is not None:
        out["classes_"] = data.classes
    if feature_map is not None:
        out["feature_map_"] = feature_map
    return out


class KernelModelMixin:
    """Input checks, feature map, moments pass and kernel output of the FKR-F²E estimators."""

    def _fit_input(self, X: Any, y: Any, sensitive_features: Any, sample_weight: Any,
                   p: dict[str, Any], *, classify: bool) -> FitInput:
        """The inputs checked (a dask input's groups and classes are left to the pass)."""
        labels = None
        if classify:
            check_array(X, "X", min_samples=2)  # rows first: no class count of 0
            labels = class_column(y)
            y = None
        elif y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None.")
        names = feature_names(X)
        X = check_array(X, "X", min_samples=2)
        if y is not None:
            y = check_array(y, "y", ndim=1)
        n = check_consistent_length(("X", X), ("y", y if y is not None else labels))
        weights = check_sample_weight(sample_weight, n)
        if sensitive_features is None:
            warnings.warn(
                f"{type(self).__name__}.fit got no sensitive_features: the model has no "
                "fairness constraint (this is how fairlearn's reductions call their "
                "estimator; pass sensitive_features=... otherwise).", UserWarning, stacklevel=3)
            s, merged = None, {}
        else:
            s, merged = group_column(sensitive_features, n, p["min_group_size"],
                                     p["small_groups"])
        data = FitInput(X=X, y=y, weights=weights, s=s, labels=labels, n=n, names=names,
                        merged=merged)
        if not any(is_dask(a) for a in (s, labels)):
            data = _resolve(data, [
                None if s is None else pd.unique(np.asarray(s, dtype=object)),
                None if labels is None else pd.unique(np.asarray(labels, dtype=object))])
        return data

    def _set_fitted(self, fitted: dict[str, Any]) -> None:
        """Every fitted attribute at once (``ABSENT`` removes one)."""
        for name, value in fitted.items():
            if value is ABSENT:
                self.__dict__.pop(name, None)
            else:
                setattr(self, name, value)

    def _kernel_params(self, data: FitInput, p: dict[str, Any], gamma: Any) -> dict[str, Any]:
        return kernel_params(p["kernel"], data.X.shape[1], gamma=gamma, degree=p["degree"],
                             coef0=p["coef0"])

    def _fit_feature_map(self, data: FitInput, p: dict[str, Any], gamma: Any,
                         landmarks: np.ndarray | None = None) -> NystroemMap:
        """The Nyström map (``landmarks`` reused when given: one draw for every gamma)."""
        params = self._kernel_params(data, p, gamma)
        n_landmarks = data.n if p["approximation"] == "exact" else p["n_landmarks"]
        fmap = fit_nystroem(data.X, params, n_landmarks=n_landmarks, landmarks=p["landmarks"],
                            rcond=p["rcond"], random_state=p["random_state"],
                            fixed_landmarks=landmarks)
        logger.info("feature map: %d landmarks, rank %d", len(fmap.landmarks), fmap.n_components)
        return fmap

    def _moments(self, data: FitInput, fmap: NystroemMap, *, folds: FoldPlan | None = None,
                 cell_grams: bool = False) -> tuple[FoldedMoments, FitInput]:
        """The pass: moments per fold and cell (whitened), and ``data`` with its values known."""
        folds = folds or FoldPlan(1)
        columns = data.columns()
        keyed = cell_moments(data.X, columns, None if data.classify else data.y, data.weights,
                             fmap.landmarks, fmap.params, folds=folds.rows(data.X),
                             n_folds=folds.n_folds, fold_seed=folds.seed, cell_grams=cell_grams)
        data = _resolve(data, [column_values(keyed.keys, c) for c in range(len(columns))])
        groups = [0] if data.groups is None else data.groups.tolist()  # no groups: all in 0
        codes = [{v: i for i, v in enumerate(groups)}]
        if data.classify:
            codes.append({v: i for i, v in enumerate(data.classes.tolist())})
        sizes = tuple(len(c) for c in codes)
        raw = arrange_moments(keyed, codes, sizes, cell_group=data.cell_group,
                              cell_label=data.cell_label)
        if data.classify:
            raw = raw.with_binary_targets()
        _check_moments(raw.total, data)
        return FoldedMoments(tuple(m.change_basis(fmap.whitening) for m in raw.folds)), data

    def _check_model(self, attribute: str) -> None:
        check_is_fitted(self, attribute)

    def _check_X(self, X: Any) -> Any:
        self._check_model("dual_coef_")
        check_feature_names(self, X)
        X = check_array(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input.")
        return X

    def _kernel_output(self, X: Any) -> Any:
        """``k(X, L) @ dual_coef_ + intercept_``: numpy in, numpy out; dask in, lazy out."""
        X = self._check_X(X)
        return self.feature_map_.project(X, self.dual_coef_[:, None])[:, 0] + self.intercept_

