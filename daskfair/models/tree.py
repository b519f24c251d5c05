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
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .schema import (
    ArrayRef,
    FramePart,
    Part,
    SchemaError,
    check_params,
    check_part,
    check_values,
)

__all__ = ["MAX_DEPTH", "NUMERIC_KINDS", "FramePart", "UnsafeModelError", "decode", "encode"]

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


#: The deepest nesting of nodes a stored tree may have (daskfair's models nest under 20).
MAX_DEPTH = 64
#: The pandas dtypes a stored table's columns may have (a dtype's text is never parsed
#: beyond these: a timezone would open a file named in it).
FRAME_DTYPES = frozenset({"float64", "float32", "int64", "int32", "int16", "int8", "uint64",
                          "uint32", "uint16", "uint8", "bool", "object", "str", "string"})
#: A seed sequence's pool size as numpy writes it, and the most it may be (numpy's loop over
#: it is uninterruptible).
POOL_SIZES = range(4, 65)


@dataclass
class _Generator:
    """A numpy RandomState or Generator by its state, built once its arrays are read."""

    kind: str
    state: Any


def decode(node: Any, classes: Mapping[str, type], array: Callable[[str], Any], *,
           build: bool = True) -> Any:
    """The object a tree from :func:`encode` describes, checked before it is built.

    The tree is decoded first with every node's own limits; then the model parts are checked
    against their schema (:mod:`.schema`) with the arrays' shapes and dtypes from their
    metadata; only then are arrays read (their values checked) and objects built.

    Parameters
    ----------
    node : JSON value
    classes : mapping of str to type
        The stored names a tree may use and their classes (nothing else is looked up).
    array : callable
        Opens an array by its path: an object with ``shape``, ``dtype`` and ``[...]`` that
        reads it (a zarr array, checked; a numpy array).
    build : bool, default=True
        Read the arrays and build the object; False only checks what can be checked before
        (returns None).

    Returns
    -------
    object

    Raises
    ------
    UnsafeModelError
        A class outside ``classes``, an unknown node kind, a malformed node, or a part that
        its schema refuses (the message names it).
    """
    try:
        value = _Parser(classes, array)(node, 0)
        if isinstance(value, Part):
            check_part(value)
        return _build(value) if build else None
    except UnsafeModelError:
        raise
    except _ReadError as exc:  # the store's own error, as it is
        raise exc.args[0] from None
    except SchemaError as exc:
        raise UnsafeModelError(f"the stored model is refused: {exc}. It was not written by "
                               "daskfair.save, or was altered after.") from None
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise UnsafeModelError(f"the stored model is malformed ({type(exc).__name__}: "
                               f"{str(exc)[:200]}).") from None


class _Parser:
    def __init__(self, classes: Mapping[str, type], array: Callable[[str], Any]) -> None:
        self.classes, self.array = classes, array

    def cls(self, name: Any) -> type:
        if not isinstance(name, str) or name not in self.classes:
            raise UnsafeModelError(
                f"the stored model names {str(name)[:80]!r}, which is not a class daskfair "
                "saves; it is refused unread (a store is never allowed to choose code to "
                f"run). It was not written by daskfair.save: daskfair saves "
                f"{sorted(self.classes)}.")
        return self.classes[name]

    def __call__(self, node: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise UnsafeModelError(f"the stored model nests deeper than {MAX_DEPTH} levels; "
                                   "daskfair's models never do.")
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, list):
            return list(node) if _plain(node) else [self(v, depth + 1) for v in node]
        if not isinstance(node, dict) or not isinstance(node.get("~"), str):
            raise UnsafeModelError(f"the stored model holds an unknown node "
                                   f"{str(node)[:80]!r}.")
        method = getattr(self, f"_{node['~']}", None) if node["~"].isidentifier() else None
        if method is None:
            raise UnsafeModelError(f"the stored model holds a node of unknown kind "
                                   f"{node['~'][:40]!r}.")
        return method(node, depth + 1)

    def items(self, node: dict, depth: int) -> list[Any]:
        items = node["items"]
        if not isinstance(items, list):
            raise ValueError("items is not a list")
        return list(items) if _plain(items) else [self(v, depth) for v in items]

    def _int(self, node: dict, depth: int) -> int:
        text = node["value"]
        if not isinstance(text, str) or len(text) > 80:
            raise ValueError("an integer node holds no short decimal text")
        return int(text)

    def _float(self, node: dict, depth: int) -> float:
        if node["value"] not in ("nan", "inf", "-inf"):
            raise ValueError(f"not a special float: {str(node['value'])[:20]!r}")
        return float(node["value"])

    def _scalar(self, node: dict, depth: int) -> Any:
        dtype = np.dtype(_dtype_text(node["dtype"]))
        if dtype.kind not in NUMERIC_KINDS:
            raise ValueError(f"a scalar of dtype {dtype}")
        return dtype.type(self(node["value"], depth))

    def _array(self, node: dict, depth: int) -> ArrayRef:
        path = node["path"]
        try:
            handle = self.array(path)
        except UnsafeModelError:
            raise
        except Exception as exc:
            raise _ReadError(exc) from exc
        return ArrayRef(path, tuple(handle.shape), np.dtype(handle.dtype), handle)

    def _values(self, node: dict, depth: int) -> np.ndarray:
        dtype = np.dtype(_dtype_text(node["dtype"]))
        items = self.items(node, depth)
        shape = node["shape"]
        if not (isinstance(shape, list) and len(shape) <= 8 and all(
                type(n) is int and n >= 0 for n in shape) and math.prod(shape) == len(items)):
            raise ValueError(f"values of shape {str(shape)[:40]} for {len(items)} items")
        if dtype.kind == "U":  # its width is what a text array costs, per item
            longest = max((len(v) for v in items if isinstance(v, str)), default=0)
            if dtype.itemsize // 4 > longest + 64:
                raise ValueError(f"text values of dtype {dtype} hold at most {longest} "
                                 "characters")
        elif dtype.kind != "O":
            raise ValueError(f"values of dtype {dtype}")
        out = np.empty(len(items), dtype=dtype)
        out[:] = items if dtype.kind != "O" else _objects(items)
        return out.reshape(shape)

    def _tuple(self, node: dict, depth: int) -> tuple:
        return tuple(self.items(node, depth))

    def _set(self, node: dict, depth: int) -> set:
        return set(self.items(node, depth))

    def _frozenset(self, node: dict, depth: int) -> frozenset:
        return frozenset(self.items(node, depth))

    def _dict(self, node: dict, depth: int) -> dict:
        out = {}
        for pair in node["items"]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError("a dict item is not a key and a value")
            key = self(pair[0], depth)
            if isinstance(key, ArrayRef | Part | FramePart | np.ndarray):
                raise ValueError("a dict key is not a plain value")
            out[key] = self(pair[1], depth)
        return out

    def _params(self, node: Any, depth: int) -> dict:
        value = self(node, depth)
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ValueError("parameters or fields are not a mapping of names")
        return value

    def _estimator(self, node: dict, depth: int) -> Part:
        name = node["class"]
        return Part("estimator", name, self.cls(name), self._params(node["params"], depth),
                    self._params(node["state"], depth))

    def _dataclass(self, node: dict, depth: int) -> Part:
        name = node["class"]
        return Part("dataclass", name, self.cls(name), None, self._params(node["fields"], depth))

    def _frame(self, node: dict, depth: int) -> FramePart:
        dtypes = node["dtypes"]
        if not isinstance(dtypes, list) or not all(t in FRAME_DTYPES for t in dtypes):
            raise ValueError(f"table columns of dtypes {str(dtypes)[:80]}; a stored table "
                             f"holds {sorted(FRAME_DTYPES)}")
        columns, index = self(node["columns"], depth), self(node["index"], depth)
        data = [self(c, depth) for c in node["data"]]
        if not isinstance(columns, list) or not (len(columns) == len(data) == len(dtypes)):
            raise ValueError("a table whose columns, dtypes and data differ in number")
        frame = FramePart(columns, dtypes, index, data)
        if any(len(c.shape) != 1 or c.shape[0] != frame.n_rows for c in data):
            raise ValueError("a table whose columns differ in length from its index")
        return frame

    def _seed_sequence(self, node: dict, depth: int) -> np.random.SeedSequence:
        entropy, key = self(node["entropy"], depth), self(node["spawn_key"], depth)
        pool, spawned = node["pool_size"], node["n_children_spawned"]
        if type(pool) is not int or pool not in POOL_SIZES:
            raise ValueError(f"a seed sequence of pool size {str(pool)[:20]}; numpy writes 4 "
                             f"(at most {POOL_SIZES[-1]} are read)")
        ints = (entropy if isinstance(entropy, list) else [entropy]) + list(key)
        if not (type(spawned) is int and 0 <= spawned < 2**32 and len(ints) <= 64
                and all(type(v) is int and 0 <= v < 2**128 for v in ints)):
            raise ValueError("a seed sequence whose entropy, spawn key or children are not "
                             "small non-negative integers")
        return np.random.SeedSequence(entropy, spawn_key=key, pool_size=pool,
                                      n_children_spawned=spawned)

    def _random_state(self, node: dict, depth: int) -> _Generator:
        return _Generator("random_state", self(node["state"], depth))

    def _generator(self, node: dict, depth: int) -> _Generator:
        return _Generator("generator", self(node["state"], depth))


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _plain(values: Any) -> bool:
    """Whether every value is a JSON scalar (a long list of them is taken as it is)."""
    return all(type(v) in _PLAIN for v in values)


def _dtype_text(text: Any) -> str:
    """A stored dtype's text, refused unless short and plain (``<f8``, ``|O``, ``<U12``)."""
    if not isinstance(text, str) or len(text) > 12 or not text.isascii():
        raise ValueError(f"a dtype {str(text)[:20]!r}")
    return text


def _build(value: Any) -> Any:
    """The decoded, checked ``value`` with its arrays read and its objects built."""
    if isinstance(value, ArrayRef):
        out = np.asarray(value.handle[...])
        if out.shape != value.shape or out.dtype != value.dtype:
            raise ValueError(f"{value.path} read as {out.dtype} {out.shape}")
        check_values(value, out)
        return out
    if isinstance(value, Part):
        fields = {k: _build(v) for k, v in value.state.items()}
        if value.kind == "dataclass":
            return value.cls(**fields)
        est = value.cls(**{k: _build(v) for k, v in value.params.items()})
        check_params(est)
        vars(est).update(fields)
        return est
    if isinstance(value, FramePart):
        data = {i: pd.Series(_build(c)).astype(t)
                for i, (c, t) in enumerate(zip(value.data, value.dtypes, strict=True))}
        frame = pd.DataFrame(data)
        frame.index = _build(value.index)
        frame.columns = value.columns
        return frame
    if isinstance(value, _Generator):
        return _generator(value.kind, _build(value.state))
    if isinstance(value, list):
        return list(value) if _plain(value) else [_build(v) for v in value]
    if isinstance(value, tuple):
        return value if _plain(value) else tuple(_build(v) for v in value)
    if isinstance(value, dict):
        return dict(value) if _plain(value.values()) else {
            k: _build(v) for k, v in value.items()}
    return value


def _generator(kind: str, state: Any) -> np.random.RandomState | np.random.Generator:
    if kind == "random_state":
        rs = np.random.RandomState()
        rs.set_state(state)
        return rs
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in _BIT_GENERATORS:
        raise UnsafeModelError(f"unknown bit generator {str(name)[:40]!r}.")
    gen = _BIT_GENERATORS[state["bit_generator"]]()
    gen.state = state
    return np.random.Generator(gen)


def _objects(items: list[Any]) -> np.ndarray:
    """An object array of ``items`` (tuples stay elements)."""
    out = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        out[i] = v
    return out
