"""The one rule for binary outcomes, in every metric and the audit: the labels a call reads
(``y_true``, ``y_pred``) hold two values at most, none missing, and when they hold two,
``pos_label`` is one of them (scikit-learn's rule)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["check_outcomes", "missing_outcome", "more_than_two"]


def more_than_two(name: str, seen: Iterable[Any]) -> str:
    """The error of a label column with more than two values."""
    return (f"{name} holds more than two values ({sorted(map(str, seen))[:5]}); binary "
            "outcomes have two: map them to two values (and pos_label to the favourable one).")


def missing_outcome(name: str) -> str:
    """The error of a label column with a missing value."""
    return (f"{name} holds missing values (NaN/None); every row needs a label. Drop those rows "
            "or fill them first.")


def check_outcomes(pos_label: Any, seen: Mapping[str, Iterable[Any]]) -> None:
    """ValueError unless the label columns ``seen`` (name → its distinct values) hold two
    values at most, together, and ``pos_label`` is one of them when they hold two.

    A single value is accepted whatever ``pos_label`` is: every rate of the favourable
    outcome is then 0 or 1 (no row predicted favourable, say), as scikit-learn accepts it.

    Parameters
    ----------
    pos_label : scalar
    seen : mapping of str to iterable
    """
    union: set[Any] = set()
    for name, values in seen.items():
        values = set(values)
        if len(values) > 2:
            raise ValueError(more_than_two(name, values))
        union |= values
    names = " and ".join(seen)
    if len(union) > 2:
        raise ValueError(more_than_two(names, union).replace(" holds ", " hold together "))
    if len(union) == 2 and pos_label not in union:
        raise ValueError(
            f"pos_label={pos_label!r} is not among the values of {names} "
            f"({sorted(map(str, union))}): give the favourable outcome's value as pos_label.")
