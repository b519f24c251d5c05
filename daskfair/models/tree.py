"""A fitted object as a tree of JSON values and numeric arrays, and back, with no pickle.

Every node the tree cannot hold as plain JSON is a dict with the key ``"~"`` naming its kind.
A class is named by its public name and found in a fixed table (:data:`CLASSES`): loading
never imports a module or calls anything the stored data name (docs/design.md#saved-models).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

__all__ = ["NUMERIC_KINDS", "UnsafeModelError", "decode", "encode"]

#: Array kinds stored as zarr arrays; others (text, objects) go into the JSON as values.
NUMERIC_KINDS = "biuf"
_BIT_GENERATORS = {c.__name__: c for c in (np.random.PCG64, np.random.PCG64DXSM,
                                           np.random.MT19937, np.random.Philox,
                                           np.random.SFC64)}
_SAFE_INT = 2**53


class UnsafeModelError(ValueError):
    """A stored model names something that is not a daskfair model part, or is malformed."""


class _ReadError(Exception):
    """An error of the array reader, passed through :func:`decode` unchanged."""


class Encoder:
    """Encodes values into JSON nodes, collecting numeric arrays by path."""

    def __init__(self, classes: Mapping[type, str], prefix: str) -> None:
        self.classes, self.prefix = classes, prefix
        self.arrays: dict[str, np.ndarray] = {}

    def array_path(self, path: tuple[str, ...]) -> str:
        parts = [re.sub(r"[^A-Za-z0-9_.-]", "_", p).strip(".") or "x" for p in path]
        parts = ["x" + p if p.startswith("__") else p for p in parts]
        name = "/".join([self.prefix, *parts])
        out, i = name, 1
        while out in self.arrays:  # two paths that sanitize alike
            out, i = f"{name}_{i}", i + 1
        return out

    def __call__(self, value: Any, path: tuple[str, ...] = ()) -> Any:
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int) and not isinstance(value, np.integer):
            return value if abs(value) < _SAFE_INT else {"~": "int", "value": str(value)}
        if isinstance(value, float) and not isinstance(value, np.floating):
            return value if math.isfinite(value) else {"~": "float", "value": repr(value)}
        if isinstance(value, np.generic):
            return {"~": "scalar", "dtype": value.dtype.str, "value": self(value.item())}
        if isinstance(value, np.ndarray):
            return self.ndarray(value, path)
        if isinstance(value, list):
            return [self(v, (*path, str(i))) for i, v in enumerate(value)]
        if isinstance(value, tuple | set | frozenset):
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            kind = type(value).__name__
            return {"~": kind, "items": [self(v, (*path, str(i))) for i, v in enumerate(items)]}
        if isinstance(value, dict):
            return {"~": "dict", "items": [[self(k), self(v, (*path, str(k)))]
                                           for k, v in value.items()]}
        return self.other(value, path)

    def ndarray(self, value: np.ndarray, path: tuple[str, ...]) -> dict[str, Any]:
        if type(value) is not np.ndarray:
            raise TypeError(f"cannot save {'.'.join(path)}: a {type(value).__name__}.")
        if value.dtype.kind in NUMERIC_KINDS:
            name = self.array_path(path)
            self.arrays[name] = value
            return {"~": "array", "path": name}
        return {"~": "values", "dtype": value.dtype.str, "shape": list(value.shape),
                "items": [self(v) for v in value.ravel().tolist()]}

    def other(self, value: Any, path: tuple[str, ...]) -> dict[str, Any]:
        name = self.classes.get(type(value))
        if name is not None and isinstance(value, BaseEstimator):
            params = value.get_params(deep=False)
            state = {k: v for k, v in vars(value).items() if k not in params}
            return {"~": "estimator", "class": name, "params": self(params, (*path, "params")),
                    "state": self(state, path)}
        if name is not None and dataclasses.is_dataclass(value):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return {"~": "dataclass", "class": name, "fields": self(fields, path)}
        if isinstance(value, pd.DataFrame):
            return {"~": "frame", "columns": self(list(value.columns)),
                    "dtypes": [str(t) for t in value.dtypes],
                    "index": self(value.index.to_numpy(), (*path, "index")),
                    "data": [self(value[c].to_numpy(), (*path, str(i)))
                             for i, c in enumerate(value.columns)]}
        if isinstance(value, np.random.SeedSequence):
            return {"~": "seed_sequence", "entropy": self(value.entropy),
                    "spawn_key": self(tuple(value.spawn_key)), "pool_size": value.pool_size,
                    "n_children_spawned": value.n_children_spawned}
        if isinstance(value, np.random.RandomState):
            return {"~": "random_state", "state": self(value.get_state(), path)}
        if isinstance(value, np.random.Generator) \
                and type(value.bit_generator).__name__ in _BIT_GENERATORS:
            return {"~": "generator", "state": self(value.bit_generator.state, path)}
        where = ".".join(path) or "the object"
        raise TypeError(
            f"cannot save {where}: a {type(value).__module__}.{type(value).__qualname__}, which "
            "is neither a daskfair model part nor plain data (numbers, text, arrays, tables).")


def encode(value: Any, classes: Mapping[type, str], prefix: str
           ) -> tuple[Any, dict[str, np.ndarray]]:
    """``value`` as a JSON tree and the numeric arrays it refers to, by path under ``prefix``.

    Parameters
    ----------
    value : object
        A fitted estimator, dataclass or plain data.
    classes : mapping of type to str
        The classes a tree may hold and their stored names.
    prefix : str
        The arrays' common path.

    Returns
    -------
    tree : JSON value
    arrays : dict of str to ndarray

    Raises
    ------
    TypeError
        A part of ``value`` the tree cannot hold (the message names it).
    """
    enc = Encoder(classes, prefix)
    return enc(value), enc.arrays


def decode(node: Any, classes: Mapping[str, type], array: Callable[[str], np.ndarray]) -> Any:
    """The object a tree from :func:`encode` describes.

    Parameters
    ----------
    node : JSON value
    classes : mapping of str to type
        The stored names a tree may use and their classes (nothing else is looked up).
    array : callable
        Reads an array by its path.

    Returns
    -------
    object

    Raises
    ------
    UnsafeModelError
        A class outside ``classes``, an unknown node kind, or a malformed node.
    """
    try:
        return _Decoder(classes, array)(node)
    except UnsafeModelError:
        raise
    except _ReadError as exc:  # the store's own error, as it is
        raise exc.args[0] from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise UnsafeModelError(f"the stored model is malformed ({type(exc).__name__}: "
                               f"{exc}).") from exc


class _Decoder:
    def __init__(self, classes: Mapping[str, type], array: Callable[[str], np.ndarray]) -> None:
        self.classes, self.array = classes, array

    def cls(self, name: Any) -> type:
        if not isinstance(name, str) or name not in self.classes:
            raise UnsafeModelError(
                f"the stored model names {name!r}, which is not a class daskfair saves; it is "
                "refused unread (a store is never allowed to choose code to run). It was not "
                f"written by daskfair.save: daskfair saves {sorted(self.classes)}.")
        return self.classes[name]

    def __call__(self, node: Any) -> Any:
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, list):
            return [self(v) for v in node]
        if not isinstance(node, dict) or not isinstance(node.get("~"), str):
            raise UnsafeModelError(f"the stored model holds an unknown node {str(node)[:80]!r}.")
        kind = node["~"]
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise UnsafeModelError(f"the stored model holds a node of unknown kind {kind!r}.")
        return method(node)

    def _int(self, node: dict) -> int:
        return int(node["value"])

    def _float(self, node: dict) -> float:
        if node["value"] not in ("nan", "inf", "-inf"):
            raise ValueError(f"not a special float: {node['value']!r}")
        return float(node["value"])

    def _scalar(self, node: dict) -> Any:
        return np.dtype(node["dtype"]).type(self(node["value"]))

    def _array(self, node: dict) -> np.ndarray:
        path = node["path"]
        try:
            return self.array(path)
        except Exception as exc:
            raise _ReadError(exc) from exc

    def _values(self, node: dict) -> np.ndarray:
        dtype = np.dtype(node["dtype"])
        if dtype.kind not in "OU":
            raise ValueError(f"values of dtype {dtype}")
        items = [self(v) for v in node["items"]]
        out = np.empty(len(items), dtype=dtype)
        out[:] = items if dtype.kind != "O" else _objects(items)
        return out.reshape(node["shape"])

    def _tuple(self, node: dict) -> tuple:
        return tuple(self(v) for v in node["items"])

    def _set(self, node: dict) -> set:
        return {self(v) for v in node["items"]}

    def _frozenset(self, node: dict) -> frozenset:
        return frozenset(self(v) for v in node["items"])

    def _dict(self, node: dict) -> dict:
        return {self(k): self(v) for k, v in node["items"]}

    def _estimator(self, node: dict) -> Any:
        est = self.cls(node["class"])(**self(node["params"]))
        vars(est).update(self(node["state"]))
        return est

    def _dataclass(self, node: dict) -> Any:
        return self.cls(node["class"])(**self(node["fields"]))

    def _frame(self, node: dict) -> pd.DataFrame:
        columns = self(node["columns"])
        data = {i: pd.Series(self(c)).astype(str(t))
                for i, (c, t) in enumerate(zip(node["data"], node["dtypes"], strict=True))}
        frame = pd.DataFrame(data)
        frame.index = self(node["index"])
        frame.columns = columns
        return frame

    def _seed_sequence(self, node: dict) -> np.random.SeedSequence:
        seq = np.random.SeedSequence(self(node["entropy"]), spawn_key=self(node["spawn_key"]),
                                     pool_size=int(node["pool_size"]),
                                     n_children_spawned=int(node["n_children_spawned"]))
        return seq

    def _random_state(self, node: dict) -> np.random.RandomState:
        rs = np.random.RandomState()
        rs.set_state(self(node["state"]))
        return rs

    def _generator(self, node: dict) -> np.random.Generator:
        state = self(node["state"])
        bit = _BIT_GENERATORS.get(state.get("bit_generator"))
        if bit is None:
            raise UnsafeModelError(f"unknown bit generator {state.get('bit_generator')!r}.")
        gen = bit()
        gen.state = state
        return np.random.Generator(gen)


def _objects(items: list[Any]) -> np.ndarray:
    """An object array of ``items`` (tuples stay elements)."""
    out = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        out[i] = v
    return out
