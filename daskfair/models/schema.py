"""What a saved model may hold, class by class: every fitted attribute's kind, and for arrays
their dtype, shape relations and finiteness (docs/design.md#saved-models).

A decoded tree (:mod:`.tree`) is checked against these before any array is read, and arrays
once read against their values. An attribute the schema does not name is refused.

Shapes are tuples of symbols: a name (``"m"``) is bound where first met and must agree
wherever else it appears in the same object; an object nested with ``share=True`` (an
estimator's feature map) sees its parent's symbols, except those its own schema lists as
``local`` (each map's rank ``r``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["SCHEMAS", "ArrayRef", "ClassSchema", "FramePart", "Part", "SchemaError",
           "check_params", "check_part", "check_values"]


class SchemaError(ValueError):
    """A decoded value that the schema refuses (the message names it)."""


@dataclass
class ArrayRef:
    """A stored array before it is read: its path, shape and dtype, and what its values must
    satisfy once read (set by the schema)."""

    path: str
    shape: tuple[int, ...]
    dtype: np.dtype
    handle: Any = None
    finite: bool = False
    low: float | None = None
    high: str | float | None = None
    scope: Scope | None = None


@dataclass
class FramePart:
    """A stored pandas DataFrame, decoded but not built."""

    columns: list[Any]
    dtypes: list[str]
    index: Any
    data: list[Any]

    @property
    def n_rows(self) -> int:
        return len(self.index) if hasattr(self.index, "__len__") else self.index.shape[0]


@dataclass
class Part:
    """An estimator or dataclass of the table, decoded but not built."""

    kind: str  # "estimator" or "dataclass"
    name: str
    cls: type
    params: dict[str, Any] | None
    state: dict[str, Any]


# -- the vocabulary of the schemas -------------------------------------------------------------

class Scope:
    """Symbols bound in one object (and its nested objects that share them)."""

    def __init__(self, parent: Scope | None = None, local: tuple[str, ...] = ()) -> None:
        self.values: dict[str, int] = {}
        self.parent, self.local = parent, local

    def _owner(self, name: str) -> Scope:
        return self if self.parent is None or name in self.local else self.parent._owner(name)

    def bind(self, name: str, value: int, where: str) -> None:
        owner = self._owner(name)
        if name in owner.values and owner.values[name] != value:
            raise SchemaError(f"{where} has {value} where {name} = {owner.values[name]} "
                              "elsewhere in the same object")
        owner.values[name] = value

    def get(self, name: str) -> int | None:
        return self._owner(name).values.get(name)


Check = Callable[[Any, Scope, str], None]


def _number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_)


def Real(*, finite: bool = True, low: float | None = None) -> Check:
    """A number (not a bool); finite unless ``finite=False``; at least ``low``."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if not _number(value):
            raise SchemaError(f"{where} is not a number")
        if finite and not math.isfinite(value):
            raise SchemaError(f"{where} is {value}, not a finite number")
        if low is not None and not value >= low:
            raise SchemaError(f"{where} is {value}, below {low}")
    return check


def Int(low: int = 0, *, bind: str | None = None) -> Check:
    """A whole number ``>= low`` (not a bool), bound to the symbol ``bind``."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
            raise SchemaError(f"{where} is not a whole number")
        if value < low:
            raise SchemaError(f"{where} is {value}, below {low}")
        if bind is not None:
            scope.bind(bind, int(value), where)
    return check


def Text(options: tuple[str, ...] | None = None) -> Check:
    def check(value: Any, scope: Scope, where: str) -> None:
        if not isinstance(value, str):
            raise SchemaError(f"{where} is not text")
        if options is not None and value not in options:
            raise SchemaError(f"{where} is {value[:40]!r}, not one of {options}")
    return check


def Flag(value: Any, scope: Scope, where: str) -> None:
    if not isinstance(value, bool | np.bool_):
        raise SchemaError(f"{where} is not True or False")


def Scalar(value: Any, scope: Scope, where: str) -> None:
    """A plain value: a number, text, a bool or None (a group, a class, a level)."""
    if not (value is None or isinstance(value, str | bool | np.bool_) or _number(value)):
        raise SchemaError(f"{where} is not a plain value")


def Nullable(inner: Check) -> Check:
    def check(value: Any, scope: Scope, where: str) -> None:
        if value is not None:
            inner(value, scope, where)
    return check


def ListOf(item: Check, *, length: str | None = None, kind: type = list) -> Check:
    """A list (or ``kind``) of items, its length bound to the symbol ``length``."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if type(value) is not kind:
            raise SchemaError(f"{where} is not a {kind.__name__}")
        if length is not None:
            scope.bind(length, len(value), f"the length of {where}")
        for i, v in enumerate(value):
            item(v, scope, f"{where}[{i}]")
    return check


def Pair(first: Check, second: Check) -> Check:
    def check(value: Any, scope: Scope, where: str) -> None:
        if type(value) is not tuple or len(value) != 2:
            raise SchemaError(f"{where} is not a pair")
        first(value[0], scope, f"{where}[0]")
        second(value[1], scope, f"{where}[1]")
    return check


def MapOf(key: Check, value: Check) -> Check:
    def check(mapping: Any, scope: Scope, where: str) -> None:
        if type(mapping) is not dict:
            raise SchemaError(f"{where} is not a mapping")
        for k, v in mapping.items():
            key(k, scope, f"a key of {where}")
            value(v, scope, f"{where}[{str(k)[:40]!r}]")
    return check


def Array(kinds: str, shape: tuple[str | int | None, ...], *, finite: bool = False,
          low: float | None = None, high: str | float | None = None) -> Check:
    """A stored numeric array of dtype kinds ``kinds`` ("f", "iu", "b"), ``shape`` in symbols;
    its values finite, ``>= low`` and ``< high`` (a symbol or a number), checked once read."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if not isinstance(value, ArrayRef):
            raise SchemaError(f"{where} is not a stored array")
        if value.dtype.kind not in kinds:
            raise SchemaError(f"{where} has dtype {value.dtype}, not of kind {kinds!r}")
        _shape(value.shape, shape, scope, where)
        value.finite, value.low, value.high, value.scope = finite, low, high, scope
    return check


def Labels(shape: tuple[str | int | None, ...]) -> Check:
    """Groups or classes: a stored numeric array, or text/objects given as values."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if isinstance(value, ArrayRef):
            Array("biuf", shape, finite=True)(value, scope, where)
            return
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "OU":
            raise SchemaError(f"{where} is neither a numeric array nor text values")
        _shape(value.shape, shape, scope, where)
        for i, v in enumerate(value.ravel()):
            Scalar(v, scope, f"{where}[{i}]")
    return check


def _shape(have: tuple[int, ...], want: tuple[str | int | None, ...], scope: Scope,
           where: str) -> None:
    if len(have) != len(want):
        raise SchemaError(f"{where} has {len(have)} dimensions, not {len(want)}")
    for i, (n, w) in enumerate(zip(have, want, strict=True)):
        if isinstance(w, int) and n != w:
            raise SchemaError(f"{where} has {n} entries along axis {i}, not {w}")
        if isinstance(w, str):
            scope.bind(w, n, f"{where} (axis {i})")


def Obj(*names: str, share: bool = False, local: tuple[str, ...] | None = None) -> Check:
    """A nested object of one of the classes ``names`` (any of the table without names), with
    its parent's symbols (``share``) but for its schema's ``local`` ones (or these)."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if not isinstance(value, Part) or (names and value.name not in names):
            raise SchemaError(f"{where} is not a {' or '.join(names) or 'model part'}")
        check_part(value, scope if share else None, where, local)
    return check


_SCALARS = frozenset({str, int, float, bool, type(None)})


def PlainData(value: Any, scope: Scope, where: str) -> None:
    """Data, not a model part (a table of results): anything the tree holds but objects."""
    if isinstance(value, Part):
        raise SchemaError(f"{where} holds a {value.name}, where only data may be")
    if isinstance(value, list | tuple) and all(type(v) in _SCALARS for v in value):
        return
    if isinstance(value, list | tuple | set | frozenset):
        for i, v in enumerate(value):
            PlainData(v, scope, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            PlainData(v, scope, f"{where}[{str(k)[:40]!r}]")


def Frame(rows: str) -> Check:
    """A table (decoded as a frame node) of ``rows`` rows."""
    def check(value: Any, scope: Scope, where: str) -> None:
        if not isinstance(value, FramePart):
            raise SchemaError(f"{where} is not a table")
        scope.bind(rows, value.n_rows, f"the rows of {where}")
    return check


def KernelParams(value: Any, scope: Scope, where: str) -> None:
    """A Nyström map's resolved kernel parameters, as :func:`daskfair.kernels.kernel_params`
    gives them (and accepts them again)."""
    from ..kernels import kernel_params

    if type(value) is not dict or set(value) != {"kernel", "gamma", "degree", "coef0"}:
        raise SchemaError(f"{where} is not a kernel's kernel, gamma, degree and coef0")
    for name in ("gamma", "degree", "coef0"):
        Real()(value[name], scope, f"{where}[{name!r}]")
    try:
        if kernel_params(value["kernel"], 1, gamma=value["gamma"], degree=value["degree"],
                         coef0=value["coef0"]) != value:
            raise ValueError("they resolve to other values")
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"{where} are not a kernel's parameters ({exc})") from None


@dataclass
class ClassSchema:
    """The fitted state of one class (an estimator's attributes, a dataclass's fields)."""

    state: dict[str, Check]
    optional: frozenset[str] = frozenset()
    local: tuple[str, ...] = ()
    #: parameters that bind a symbol of the state (``n_clusters`` → K)
    param_symbols: dict[str, str] = field(default_factory=dict)


# -- the classes -------------------------------------------------------------------------------

_GROUPS = {"groups_": Nullable(Labels(("g",))), "merged_groups_": MapOf(Text(), Int(0))}
_INPUT = {"n_features_in_": Int(1, bind="d"), "feature_names_in_": Labels(("d",)), **_GROUPS}
_CLASSIFIER = {"classes_": Labels((2,)), "threshold_": Real(),
               "calibration_": Pair(Real(), Real())}
_FAIR_FEATURES = {
    **_INPUT, "feature_map_": Obj("NystroemMap", share=True),
    "coef_": Array("f", ("k",), finite=True), "intercept_": Real(),
    "projection_": Array("f", ("m", "k"), finite=True),
    "dual_coef_": Array("f", ("m",), finite=True), "eigenvalues_": Array("f", ("k",)),
    "n_fair_features_": Int(1, bind="k"), "_n_features_out": Int(1, bind="k")}
_CV = {
    **_INPUT, "feature_maps_": ListOf(Obj("NystroemMap", share=True), length="h"),
    "moments_": ListOf(Obj("Moments"), length="h"), "_table": Frame("c"),
    "candidate_kernel_": Array("iu", ("c",), low=0, high="h"),
    "candidate_dual_coef_": Array("f", ("m", "c"), finite=True),
    "candidate_intercept_": Array("f", ("c",), finite=True),
    "cv_disparity_": Array("f", ("c", "t")), "cv_disparity_sem_": Array("f", ("c", "t")),
    "cv_error_": Array("f", ("c", "t")), "n_candidates_": Int(1, bind="c"),
    "n_splits_": Int(2), "_constraint": Text(("demographic_parity", "equalized_odds")),
    "_n_rows": Int(1), "disparity_bound_": Real(low=0),
    "disparity_confidence_": Nullable(Real(low=0)), "new_rows_": Nullable(Int(1)),
    "cv_results_": MapOf(Text(), PlainData), "best_index_": Int(0),
    "best_params_": MapOf(Text(), PlainData), "best_score_": Real(finite=False),
    "best_disparity_": Real(finite=False),
    "best_disparity_interval_": Pair(Real(finite=False), Real(finite=False)),
    # the refitted model (refit=True)
    "feature_map_": Obj("NystroemMap", share=True),
    "dual_coef_": Array("f", ("m",), finite=True), "intercept_": Real(),
    # gammas="auto": one row per width searched on the sample; n_landmarks="auto": one row
    # per landmark count tried
    "width_search_": Frame("w"), "rank_search_": Frame("r")}
_CV_OPTIONAL = frozenset({"feature_map_", "dual_coef_", "intercept_", "feature_names_in_",
                          "width_search_", "rank_search_"})
_CV_CLASSIFIER = {
    **_CV, **_CLASSIFIER, "thresholds_": Array("f", ("c", "t")),
    "_hist": Array("f", ("c", "cells", None), finite=True),
    "_bins": Pair(Array("f", ("c",), finite=True), Array("f", ("c",), finite=True)),
    "_cell_label": Array("iu", ("cells",), low=0, high=2),
    "_cell_group": Array("iu", ("cells",), low=0), "_rows_per_weight": Real(low=0),
    "best_threshold_": Real(finite=False)}
_CLUSTERS = {
    "labels_": Array("iu", ("n",), low=0, high="K"),
    "cluster_centers_": Array("f", ("K", "d"), finite=True), "cost_": Real(low=0),
    "balance_": Real(low=0), "n_iter_": Int(0), "n_features_in_": Int(1, bind="d"),
    **_GROUPS}
_LEVELS = MapOf(Text(), ListOf(Scalar))

SCHEMAS: dict[str, ClassSchema] = {
    "FairKernelRegressor": ClassSchema(_FAIR_FEATURES, frozenset({"feature_names_in_"})),
    "FairKernelClassifier": ClassSchema({**_FAIR_FEATURES, **_CLASSIFIER, "n_iter_": Int(1)},
                                        frozenset({"feature_names_in_"})),
    "FairKernelRidge": ClassSchema(
        {**_INPUT, "feature_map_": Obj("NystroemMap", share=True, local=()),
         "coef_": Array("f", ("r",), finite=True), "intercept_": Real(),
         "dual_coef_": Array("f", ("m",), finite=True)}, frozenset({"feature_names_in_"})),
    "FairKernelRegressorCV": ClassSchema(_CV, _CV_OPTIONAL),
    "FairKernelClassifierCV": ClassSchema(
        _CV_CLASSIFIER, _CV_OPTIONAL | {"threshold_", "calibration_", "best_threshold_"}),
    # a front's point (ParetoFront.point) has no history, iterations or merged groups
    "SAFairKMeans": ClassSchema(
        {**_CLUSTERS, "history_": Array("f", (None, 2))},
        frozenset({"history_", "n_iter_", "merged_groups_"}), param_symbols={"n_clusters": "K"}),
    "VFairKMeans": ClassSchema(
        {**_CLUSTERS, "objective_": Array("f", (None,)), "fairness_error_": Real(low=0)},
        param_symbols={"n_clusters": "K"}),
    "TableEncoder": ClassSchema(
        {"feature_names_in_": Labels(("d",)), "n_features_in_": Int(1, bind="d"),
         "numeric_columns_": ListOf(Text()), "indicator_columns_": ListOf(Text()),
         "fill_": MapOf(Text(), Real()), "levels_": _LEVELS, "n_features_out_": Int(1),
         "lengths_": ListOf(Int(0)), "summary_": Obj("TableSummary")}),
    "ColumnScaler": ClassSchema(
        {"offset_": Array("f", ("d",), finite=True),
         "scale_": Array("f", ("d",), finite=True, low=np.finfo(np.float64).tiny),
         "n_features_in_": Int(1, bind="d")}),
    "TableSummary": ClassSchema({"columns": MapOf(Text(), Obj("ColumnSummary")),
                                 "lengths": ListOf(Int(0))}),
    "ColumnSummary": ClassSchema(
        {"text": Flag, "n_missing": Int(0), "n_infinite": Int(0), "low": Real(finite=False),
         "high": Real(finite=False), "counts": Nullable(MapOf(Scalar, Int(0))),
         "n_distinct": Int(0), "types": ListOf(Text(), kind=set)}),
    "NystroemMap": ClassSchema(
        {"landmarks": Array("f", ("m", "d"), finite=True),
         "whitening": Array("f", ("m", "r"), finite=True),
         "eigenvalues": Array("f", ("r",), finite=True, low=0),
         "params": KernelParams},
        local=("r",)),
    "Moments": ClassSchema(
        {"counts": Array("f", ("cells",), finite=True),
         "sums": Array("f", ("cells", "p"), finite=True),
         "grams": Array("f", (None, "p", "p"), finite=True),
         "fy": Array("f", ("cells", "p"), finite=True),
         "sum_y": Array("f", ("cells",), finite=True),
         "sum_yy": Array("f", ("cells",), finite=True),
         "cell_group": Array("iu", ("cells",), low=0),
         "cell_label": Array("i", ("cells",), low=-1, high=2)}),
    "sklearn.pipeline.Pipeline": ClassSchema({}),
}

#: A Pipeline's parameters: its steps, and nothing that caches (``memory`` names a folder whose
#: pickles a refit would load) or transforms its inputs elsewhere.
_PIPELINE_PARAMS: dict[str, Check] = {
    "steps": ListOf(Pair(Text(), Obj())), "memory": lambda v, s, w: _none(v, w),
    "transform_input": lambda v, s, w: _none(v, w), "verbose": Flag}


def _none(value: Any, where: str) -> None:
    if value is not None:
        raise SchemaError(f"{where} is {str(value)[:60]!r}; daskfair saves Pipelines without "
                          "it (None), and a stored one is never taken")


def _check_params(part: Part, scope: Scope, where: str) -> None:
    params = part.params or {}
    signature = [p for p in inspect.signature(part.cls.__init__).parameters.values()
                 if p.name != "self"]
    unknown = set(params) - {p.name for p in signature}
    missing = {p.name for p in signature if p.default is p.empty} - set(params)
    if unknown or missing:
        raise SchemaError(f"{where} has parameters {sorted(unknown)[:5]} that {part.name} "
                          f"does not take, or lacks {sorted(missing)[:5]}")
    if part.name == "sklearn.pipeline.Pipeline":
        for name, check in _PIPELINE_PARAMS.items():
            check(params.get(name), scope, f"{where}.{name}")
        return
    for name, value in params.items():
        PlainData(value, scope, f"{where}.{name}")
    for name, symbol in SCHEMAS[part.name].param_symbols.items():
        Int(1, bind=symbol)(params.get(name), scope, f"{where}.{name}")


def check_params(estimator: Any) -> None:
    """The estimator's own check of its parameters (what ``fit`` refuses, a load refuses)."""
    validate = getattr(estimator, "_validate_params", None)
    if validate is not None:
        try:
            validate()
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"a stored {type(estimator).__name__} has a parameter its class "
                              f"refuses: {exc}") from None


def check_part(part: Part, parent: Scope | None = None, where: str = "the model",
               local: tuple[str, ...] | None = None) -> None:
    """Check ``part`` (and what it holds) against its class's schema.

    Parameters
    ----------
    part : Part
    parent : Scope, default=None
        The symbols of the object that holds ``part`` when it shares them.
    where : str
        The part's place, for messages.
    local : tuple of str, default=None
        The symbols ``part`` keeps to itself (None: its schema's).

    Raises
    ------
    SchemaError
        The first thing refused, named by its place (``the model.steps[2][1].dual_coef_``).
    """
    schema = SCHEMAS[part.name]
    local = schema.local if local is None else local
    scope = Scope(parent, local) if parent is not None else Scope()
    if part.kind == "estimator":
        _check_params(part, scope, where)
    missing = set(schema.state) - set(part.state) - schema.optional
    unknown = set(part.state) - set(schema.state)
    if unknown:
        raise SchemaError(f"{where} holds attributes {sorted(map(str, unknown))[:5]} that a "
                          f"fitted {part.name} never has")
    if missing:
        raise SchemaError(f"{where} lacks the attributes {sorted(missing)[:5]} of a fitted "
                          f"{part.name}")
    for name, value in part.state.items():
        schema.state[name](value, scope, f"{where}.{name}")


def check_values(ref: ArrayRef, values: np.ndarray) -> None:
    """The values the schema asked of an array once read (finite, within bounds)."""
    if ref.finite and values.dtype.kind == "f" and not np.isfinite(values).all():
        raise SchemaError(f"{ref.path} holds NaN or infinite values where a fitted model has "
                          "finite numbers")
    if values.size and ref.low is not None and not values.min() >= ref.low:
        raise SchemaError(f"{ref.path} holds values below {ref.low}")
    high = ref.scope.get(ref.high) if isinstance(ref.high, str) and ref.scope else ref.high
    if values.size and high is not None and not values.max() < high:
        raise SchemaError(f"{ref.path} holds values of {high} or more")

