"""Renamed parameters, arguments and attributes: the old name works for one release and
warns with a ``FutureWarning`` that names the new one (docs/vocabulary.md lists them).

Estimators keep a renamed constructor parameter in their signature with the default
``DEPRECATED`` (scikit-learn's own pattern: ``get_params``, ``clone`` and ``set_params``
must see every name ``__init__`` takes); :func:`renamed_params` reads it at ``fit``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["DEPRECATED", "REMOVED_IN", "RenamedParamsMixin", "renamed_attribute",
           "renamed_kwargs", "renamed_message", "renamed_params", "warn_renamed"]

#: Default of a renamed constructor parameter: "not given".
DEPRECATED = "deprecated"
#: The release in which the old names stop working.
REMOVED_IN = "0.3"


def renamed_message(old: str, new: str) -> str:
    """What a renamed name says: its replacement and when it goes."""
    use = new if new.startswith("-") else f"{new}=..."
    return (f"'{old}' is renamed '{new}' (same meaning); '{old}' will be removed in "
            f"daskfair {REMOVED_IN}. Use {use} instead.")


def warn_renamed(owner: str, old: str, new: str, stacklevel: int = 3) -> None:
    """One ``FutureWarning``: ``owner``'s ``old`` is now ``new``."""
    warnings.warn(f"{owner}: {renamed_message(old, new)}", FutureWarning,
                  stacklevel=stacklevel)


def renamed_params(estimator: Any, renames: Mapping[str, str], *, stacklevel: int = 5
                   ) -> dict[str, Any]:
    """The value of every new name, taken from its old name where that one was given.

    Warns once per old name given (``stacklevel`` counts from this function's caller's
    caller: the default points at the user's ``est.fit(...)`` through ``fit`` → a checking
    method → here). Giving both names is an error (which one was meant is unknown), unless
    the new one still has its default.
    """
    out = {}
    defaults = _init_defaults(type(estimator))
    for old, new in renames.items():
        value = getattr(estimator, new)
        old_value = getattr(estimator, old)
        if not (isinstance(old_value, str) and old_value == DEPRECATED):
            if not _same(value, defaults.get(new, value)):
                raise ValueError(
                    f"{type(estimator).__name__}: both '{old}' (renamed) and '{new}' are "
                    f"given; give only {new}=... .")
            warn_renamed(type(estimator).__name__, old, new, stacklevel=stacklevel)
            value = old_value
        out[new] = value
    return out


class RenamedParamsMixin:
    """``set_params`` of a new name clears its old one, so an estimator built with an old
    name can still take ``set_params(new=...)`` (e.g. ``set_params(**best_params_)``).

    Subclasses list their renames in ``_renamed_params`` ({old: new}).
    """

    _renamed_params: Mapping[str, str] = {}

    def set_params(self, **params: Any) -> Any:
        """Set parameters, as scikit-learn's ``set_params``; a new name clears its old one.

        Parameters
        ----------
        **params
            Parameter names and values (``best_params_`` of a CV estimator, for instance).

        Returns
        -------
        self
            The estimator.
        """
        for old, new in self._renamed_params.items():
            if new in params and old not in params:
                params[old] = DEPRECATED
        return super().set_params(**params)  # type: ignore[misc]


def renamed_kwargs(**renames: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: a function accepts each ``old=`` keyword as ``new=``, with a warning."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both '{old}' (renamed) and "
                                        f"'{new}'; give only {new}=... .")
                    warn_renamed(f"{func.__name__}()", old, new)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__renamed_kwargs__ = dict(renames)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def renamed_attribute(old: str, new: str, convert: Callable[[Any], Any] | None = None,
                      doc: str = "") -> property:
    """A read-only property ``old`` that warns and returns ``convert(self.new)``."""

    def get(self: Any) -> Any:
        value = getattr(self, new)  # unfitted: AttributeError, no warning
        warn_renamed(type(self).__name__, old, new)
        return value if convert is None else convert(self, value)

    return property(get, doc=doc or f"Renamed ``{new}``; warns with a FutureWarning.")


def _init_defaults(cls: type) -> dict[str, Any]:
    import inspect

    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):
        return False
