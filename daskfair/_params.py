"""Parameters checked against one declarative table per estimator or function, before any
work (docs/design.md#parameters).

A table maps each parameter to the kinds of value it takes (:class:`Spec`); a value is
accepted when one of them accepts it. A value of none of the kinds' types raises TypeError,
a value of the right type out of range ValueError; the message names the parameter, the
value and what is allowed: ``n_clusters must be an integer >= 2, got 1.``

scikit-learn declares its estimators' parameters the same way, in a private module
(``sklearn.utils._param_validation``) that raises one exception type for both kinds of
mistake and phrases its messages for its own parameters; daskfair keeps its own small
version: it tells a wrong type from a wrong value, refuses NaN and ±inf wherever a number
must be finite, and does not depend on a private module of another project.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from numbers import Real as _Real
from typing import Any, ClassVar

import numpy as np

__all__ = ["Array", "Flag", "Grid", "Integer", "Named", "Nothing", "Options", "ParamsMixin",
           "Real", "Seed", "Spec", "check_arguments", "check_params", "checked",
           "is_sequence", "shown"]


class Spec:
    """One kind of value a parameter takes."""

    def has_type(self, value: Any) -> bool:
        """Whether ``value`` is of this kind's type (then a refusal is a ValueError)."""
        raise NotImplementedError

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _bound(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        if not low_open and not high_open:
            return f" from {low:g} to {high:g}"
        return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f" {'<' if high_open else '<='} {high:g}"
    return ""


def _within(value: float, low: float | None, high: float | None, low_open: bool,
            high_open: bool) -> bool:
    if low is not None and not (value > low if low_open else value >= low):
        return False
    return high is None or (value < high if high_open else value <= high)


def _why(reason: str) -> str:
    return f" ({reason})" if reason else ""


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


@dataclass(frozen=True)
class Integer(Spec):
    """A whole number (a bool is not one) within the bounds."""

    low: int | None = None
    high: int | None = None
    why: str = ""

    def has_type(self, value: Any) -> bool:
        return isinstance(value, Integral) and not _is_bool(value)

    def accepts(self, value: Any) -> bool:
        return self.has_type(value) and _within(value, self.low, self.high, False, False)

    def describe(self) -> str:
        return "an integer" + _bound(self.low, self.high, False, False) + _why(self.why)


@dataclass(frozen=True)
class Real(Spec):
    """A number (a bool is not one; NaN never; ±inf only when ``finite`` is False) within the
    bounds, each closed unless said open."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True
    why: str = ""

    def has_type(self, value: Any) -> bool:
        return isinstance(value, _Real) and not _is_bool(value)

    def accepts(self, value: Any) -> bool:
        if not self.has_type(value) or math.isnan(value):
            return False
        if self.finite and not math.isfinite(value):
            return False
        return _within(value, self.low, self.high, self.low_open, self.high_open)

    def describe(self) -> str:
        return (f"a {'finite ' if self.finite else ''}number"
                + _bound(self.low, self.high, self.low_open, self.high_open) + _why(self.why))


@dataclass(frozen=True)
class Options(Spec):
    """One of a few values (text, mostly)."""

    values: tuple[Any, ...]

    def has_type(self, value: Any) -> bool:
        return any(type(value) is type(v) for v in self.values)

    def accepts(self, value: Any) -> bool:
        return self.has_type(value) and any(value == v for v in self.values)

    def describe(self) -> str:
        if len(self.values) == 1:
            return repr(self.values[0])
        return f"one of {self.values}"


@dataclass(frozen=True)
class _Nothing(Spec):
    def has_type(self, value: Any) -> bool:
        return value is None

    def accepts(self, value: Any) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


#: None, where a parameter may be left unset.
Nothing = _Nothing()


@dataclass(frozen=True)
class _Flag(Spec):
    def has_type(self, value: Any) -> bool:
        return _is_bool(value)

    def accepts(self, value: Any) -> bool:
        return _is_bool(value)

    def describe(self) -> str:
        return "True or False"


#: True or False (not 0 or 1).
Flag = _Flag()


@dataclass(frozen=True)
class _Seed(Spec):
    def has_type(self, value: Any) -> bool:
        return isinstance(value, Integral | np.random.RandomState | np.random.Generator
                          | np.random.SeedSequence) and not _is_bool(value)

    def accepts(self, value: Any) -> bool:
        return self.has_type(value) and not (isinstance(value, Integral) and value < 0)

    def describe(self) -> str:
        return "a non-negative integer, a numpy RandomState, Generator or SeedSequence"


#: A seed as scikit-learn takes it (None too, with Nothing).
Seed = _Seed()


@dataclass(frozen=True)
class Grid(Spec):
    """A non-empty sequence (a list, a tuple, an array) of values of ``items``."""

    items: tuple[Spec, ...]

    def has_type(self, value: Any) -> bool:
        return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str)

    def accepts(self, value: Any) -> bool:
        return self.has_type(value) and len(value) > 0 and all(
            any(s.accepts(v) for s in self.items) for v in value)

    def describe(self) -> str:
        return "a non-empty list of values, each " + " or ".join(
            s.describe() for s in self.items)


@dataclass(frozen=True)
class Array(Spec):
    """An array-like of values (labels, a starting assignment): checked where it is used."""

    what: str = "an array"

    def has_type(self, value: Any) -> bool:
        if isinstance(value, str | bytes):
            return False
        return isinstance(value, Sequence | np.ndarray) or hasattr(value, "__array__")

    def accepts(self, value: Any) -> bool:
        return self.has_type(value)

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class Named(Spec):
    """An object ``test`` accepts, described by ``what`` (a splitter, a fairlearn moment)."""

    what: str
    test: Callable[[Any], bool]
    kind: Callable[[Any], bool] | None = None  # its type (None: ``test`` alone)

    def has_type(self, value: Any) -> bool:
        return (self.kind or self.test)(value)

    def accepts(self, value: Any) -> bool:
        return self.test(value)

    def describe(self) -> str:
        return self.what


Table = Mapping[str, Sequence[Spec]]


def check_params(values: Mapping[str, Any], table: Table) -> None:
    """Check each value of ``values`` named in ``table`` against its kinds, in the table's
    order.

    Parameters
    ----------
    values : mapping of str to object
    table : mapping of str to sequence of Spec

    Raises
    ------
    TypeError
        A value of none of its kinds' types.
    ValueError
        A value of the right type that none of its kinds accepts (out of range, not finite,
        not one of the options).
    """
    for name, specs in table.items():
        value = values[name]
        if any(s.accepts(value) for s in specs):
            continue
        allowed = " or ".join(s.describe() for s in specs)
        error = ValueError if any(s.has_type(value) for s in specs) else TypeError
        raise error(f"{name} must be {allowed}, got {shown(value)}.")


def check_arguments(target: Any, values: Mapping[str, Any]) -> None:
    """The entries of ``values`` that ``target``'s table names (a function wrapped by
    :func:`checked`, or an estimator class), checked as :func:`check_params` does: what a
    caller assembles ahead of a call is refused before its data are read."""
    table = target._parameter_constraints
    check_params(values, {k: v for k, v in table.items() if k in values})


def shown(value: Any) -> str:
    """``repr`` of ``value`` as a Python value (``5``, not ``np.int64(5)``), at most 80
    characters: how a message quotes what it was given."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 80 else text[:77] + "..."


class ParamsMixin:
    """``_validate_params``: the estimator's parameters against its ``_parameter_constraints``
    (every constructor parameter), then its own rules between parameters."""

    _parameter_constraints: ClassVar[dict[str, list[Spec]]]

    def _validate_params(self) -> dict[str, Any]:
        """Every parameter, checked; a mapping of their values."""
        params = self.get_params(deep=False)  # type: ignore[attr-defined]
        check_params(params, self._parameter_constraints)
        self._check_combination(params)
        return params

    def _check_combination(self, params: dict[str, Any]) -> None:
        """Rules between parameters (ValueError); none by default."""


def is_sequence(value: Any) -> bool:
    """A list, a tuple or an array (not text)."""
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


def checked(**table: Sequence[Spec]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A function whose named parameters are checked against ``table`` before it runs."""
    import functools
    import inspect

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check_params(bound.arguments, table)
            return fn(*args, **kwargs)

        call._parameter_constraints = table  # type: ignore[attr-defined]
        return call
    return wrap
