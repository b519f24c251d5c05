"""Per-block statistics of an audit (docs/design.md#audits-in-one-pass): the rows of every
(group, label, decision) cell, their weights as exact integer sums, and score histograms.
Every statistic is a sum of integers, so any cut of the rows into blocks gives the same
bits."""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._keyed import MAX_KEYS, MISSING, Keyed, merge, too_many_keys
from .._params import shown
from .._scratch import scratch
from ._audit_kernels import (
    SLOTS,
    add_run,
    dense_cells,
    merge_runs,
    occupied,
    tally,
    text_codes,
    unit_bin_all,
)
from ._outcomes import missing_outcome, more_than_two

__all__ = [
    "EXPONENTS",
    "SCORE_BITS",
    "UNIT_BINS",
    "AuditBlock",
    "audit_block",
    "coded_groups",
    "exact_value",
    "merge_blocks",
    "score_bins",
]

#: Binary exponents (of ``numpy.frexp``) a weight or squared weight may have: weights are 0
#: or in [2**-40, 2**40).
EXPONENTS = np.arange(-80, 81)
#: Scores fall in bins below 2**SCORE_BITS: [0, 1] in UNIT_BINS equal bins, and scores
#: outside it by the top 15 bits of their float32 order key (7 bits of mantissa).
SCORE_BITS = 18
#: 2**4 3**2 5**2 7: every k / n_bins for n_bins of 1 to 10, 12, 14, 15, 16, 18, 20, 24, 25,
#: 28, 30, ..., 50, ..., 100 is a bin boundary, so calibration bins of those sizes are exact.
UNIT_BINS = 25200
_HALF = 26  # a 53-bit mantissa is summed as two int64 halves of at most 27 bits


@dataclass(frozen=True)
class AuditBlock:
    """One block's statistics.

    ``cells``: Keyed with keys ``(*group values, label, decision)``, values ``(rows,)`` and, for
    weights, ``(rows, parts)`` where ``parts[k, 0 | 1, 0 | 1, e]`` holds the high and low
    mantissa halves of Σw (0) and Σw² (1) at exponent EXPONENTS[e]. ``histograms``: per
    ``(*group values, label)``, the sorted score bins and their rows (None: no scores).
    """

    cells: Keyed
    histograms: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] | None
    labels: tuple[frozenset[Any], frozenset[Any]] = (frozenset(), frozenset())


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view (numba compiles read-only and writable arrays apart)."""
    view = a.view()
    view.setflags(write=False)
    return view


_malformed = ("a text column is a malformed Arrow array (its offsets decrease or leave its "
              "data buffer): rebuild it (pyarrow.array(values.to_pylist())).")


def _text_codes(column: Any, out: np.ndarray) -> list[Any] | None:
    """Codes of an Arrow-backed text column, read from its buffers into ``out``, and its
    values (None: not such a column)."""
    dtype = getattr(column, "dtype", None)
    if sys.byteorder != "little":  # the kernel reads the bytes as little-endian words
        return None
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        import pyarrow as pa  # the column is Arrow's: pyarrow is there
    elif isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa
        if not (pa.types.is_string(dtype.pyarrow_dtype)
                or pa.types.is_large_string(dtype.pyarrow_dtype)):
            return None
    else:
        return None
    arr = pa.array(column.array if isinstance(column, pd.Series) else column)
    if isinstance(arr, pa.ChunkedArray):  # several chunks: one copy into one
        arr = arr.combine_chunks()
    if len(arr) != len(out) or not len(arr):
        return None
    arr.validate()  # O(1): every buffer as long as the array's length needs
    valid, offsets, data = (np.frombuffer(b, dtype=np.uint8) if b is not None else None
                            for b in arr.buffers())
    # this array's rows only (a slice shares its parent's buffers), as read-only int64
    # offsets and bytes: one compiled signature
    width = np.dtype(np.int64 if pa.types.is_large_string(arr.type) else np.int32)
    offsets = offsets[arr.offset * width.itemsize:(arr.offset + len(arr) + 1) *
                      width.itemsize].view(width)
    offsets = _read_only(offsets.astype(np.int64, copy=not offsets.flags.aligned))
    data = _read_only(data if data is not None else np.zeros(0, dtype=np.uint8))
    first, last = int(offsets[0]), int(offsets[-1])
    if not 0 <= first <= last <= len(data):  # then the kernel checks every row's offsets
        raise ValueError(_malformed)
    words = scratch("text words", (last - first) // 8 + 2, np.uint64)
    words[-2:] = 0  # the bytes past the last text's (never part of a key) are zeros
    words.view(np.uint8)[:last - first] = data[first:last]
    valid = _read_only(valid if arr.null_count and valid is not None else
                       np.zeros(0, dtype=np.uint8))
    firsts = np.empty(MAX_KEYS, dtype=np.int64)
    slot_keys, slot_codes = scratch("text slot keys", SLOTS, np.uint64), scratch(
        "text slot codes", SLOTS, np.int64)
    slot_keys.fill(0)
    slot_codes.fill(0)
    k = text_codes(offsets, data, words, first, valid, arr.offset, out, firsts, slot_keys,
                   slot_codes)
    if k == -2:
        raise ValueError(_malformed)
    if k < 0:
        raise ValueError(too_many_keys(MAX_KEYS + 1))
    values = [arr[int(f)].as_py() for f in firsts[:k]]
    if arr.null_count:
        out[out < 0] = k
        values.append(MISSING)
    return values


def _codes(column: Any, out: np.ndarray) -> list[Any]:
    """Codes of a column's values by first appearance, into ``out``, and the values (MISSING
    last, if a value is missing)."""
    text = _text_codes(column, out)
    if text is not None:
        return text
    if not isinstance(column, pd.Series | pd.Categorical):  # pandas keeps Arrow strings
        column = np.asarray(column).ravel()
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    if len(codes) != len(out):
        raise ValueError(f"every input needs one value per row; got {len(out)} labels and "
                         f"{len(codes)} sensitive values.")
    values = [u.item() if isinstance(u, np.generic) else u for u in list(uniques)]
    out[:] = codes
    if (codes < 0).any():
        out[codes < 0] = len(values)
        values.append(MISSING)
    return values


def _exact_parts(w: np.ndarray, cell: np.ndarray, n_cells: int) -> np.ndarray:
    """``parts[cell, 0 | 1 (w, w²), 0 | 1 (high, low), exponent]`` as exact int64 sums."""
    out = np.zeros((n_cells, 2, 2, len(EXPONENTS)), dtype=np.int64)
    for j, v in enumerate((w, w * w)):
        m, e = np.frexp(v)
        mantissa = np.ldexp(m, 53).astype(np.int64)  # exact: m has 53 bits
        slot = cell * len(EXPONENTS) + (e - EXPONENTS[0])
        for h, half in enumerate((mantissa >> _HALF, mantissa & ((1 << _HALF) - 1))):
            # each half < 2**27: float sums of fewer than 2**26 of them are exact
            total = np.bincount(slot, weights=half.astype(np.float64),
                                minlength=n_cells * len(EXPONENTS))
            out[:, j, h, :] = total.astype(np.int64).reshape(n_cells, len(EXPONENTS))
    return out


def exact_value(parts: np.ndarray) -> np.ndarray:
    """Float64 sums from ``parts[..., 0 | 1 (high, low), exponent]``: each rounded once."""
    flat = parts.reshape(-1, 2, len(EXPONENTS))
    out = np.empty(len(flat))
    lowest = int(EXPONENTS[0]) - 53
    for i, (high, low) in enumerate(flat):
        total = 0
        for k, e in enumerate(EXPONENTS):
            if high[k] or low[k]:
                total += ((int(high[k]) << _HALF) + int(low[k])) << (int(e) - int(EXPONENTS[0]))
        out[i] = math.ldexp(float(total), lowest)  # Python ints are exact: one rounding
    return out.reshape(parts.shape[:-2])


def score_bins(score: np.ndarray) -> np.ndarray:
    """Bins that keep the order of the scores: a higher bin holds only higher scores.

    Three ranges, one above the other: negative scores in [0, 2**14) and scores above 1 in
    [2**17, 2**17 + 2**15) by their float32 order key; [0, 1] in UNIT_BINS equal bins from
    2**15 (probabilities, which most scores are, at a resolution of 4e-5), each closed on the
    right as ``calibration_curve``'s bins are: bin b holds (b / UNIT_BINS, (b + 1) /
    UNIT_BINS], and bin 0 also 0 (the kernel's ``unit_bin``, the boundaries as floats).
    """
    s = np.asarray(score, dtype=np.float64)
    out = np.empty(len(s), dtype=np.int64)  # the kernel's rule: one length, every score in [0, 1]
    unit_bin_all(_read_only(np.ascontiguousarray(np.clip(s, 0.0, 1.0))), UNIT_BINS, out)
    out += 2**15
    outside = np.flatnonzero((s < 0) | (s > 1))
    if len(outside):
        f = s[outside].astype(np.float32)
        u = f.view(np.uint32)
        key = (np.where(u >> 31, ~u, u | np.uint32(0x80000000)) >> np.uint32(17)).astype(
            np.int64)
        out[outside] = np.where(f < 0, key, key + 2**17)
    return out


def _histograms(group: np.ndarray, truth: np.ndarray, bins: np.ndarray,
                keys: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[np.ndarray, ...]]:
    """Per (group, label) key: its sorted distinct bins and their rows."""
    joint = np.sort((group * 2 + truth) << SCORE_BITS | bins)
    cut = np.flatnonzero(np.diff(joint)) + 1
    uniq = joint[np.r_[0, cut]] if len(joint) else joint
    counts = np.diff(np.r_[0, cut, len(joint)]) if len(joint) else joint
    owner = uniq >> SCORE_BITS
    cuts = np.flatnonzero(np.diff(owner)) + 1
    out = {}
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(uniq)], strict=True):
        g, y = divmod(int(owner[lo]), 2)
        out[(*keys[g], y)] = ((uniq[lo:hi] & ((1 << SCORE_BITS) - 1)).astype(np.int32),
                              counts[lo:hi].astype(np.int64))
    return out


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a column (by its range, for integers)."""
    if values.dtype.kind in "iub" and len(values):
        lo, hi = values.min(), values.max()
        if int(hi) - int(lo) <= 1:  # the minimum and the maximum are both there
            return np.array([lo] if lo == hi else [lo, hi], dtype=values.dtype)
        if int(hi) - int(lo) < 4096:
            return np.flatnonzero(np.bincount(values.astype(np.int64) - int(lo))) + int(lo)
    return pd.unique(values)


def _binary(values: Any, name: str, pos_label: Any) -> tuple[np.ndarray, frozenset[Any]]:
    """1 where ``values == pos_label``, and the distinct values (checked after the pass)."""
    values = np.asarray(values).ravel()
    if values.dtype.kind not in "iub" and pd.isna(values).any():
        raise ValueError(missing_outcome(name))
    seen = _distinct(values)
    if len(seen) > 2:
        raise ValueError(more_than_two(name, seen) + " Numbers to compare as amounts: "
                         "audit(..., task='regression').")
    kind = bool if values.dtype.kind == "b" else None
    if values.dtype.kind in "iubf" and isinstance(pos_label, int | float | np.number):
        # compared into this thread's scratch memory
        hit = np.equal(values, pos_label, out=scratch(name, len(values), np.bool_)).view(np.int8)
    else:
        hit = (values == pos_label).astype(np.int8)
    return hit, frozenset(
        kind(v) if kind else v.item() if isinstance(v, np.generic) else v for v in seen)


def _check_inputs(score: np.ndarray | None, w: np.ndarray | None) -> None:
    if score is not None and not np.isfinite(score, out=scratch("finite", len(score),
                                                                np.bool_)).all():
        raise ValueError("y_score holds NaN or infinite values; drop or fill those rows.")
    if w is not None:
        bad = ~np.isfinite(w) | (w < 0) | ((w != 0) & ((w < 2.0**-40) | (w >= 2.0**40)))
        if bad.any():
            raise ValueError(
                f"sample_weight holds {shown(w[bad][0])}: weights must be 0 or between 2**-40 and "
                "2**40 (about 1e-12 and 1e12), finite and not negative; rescale them.")


def coded_groups(groups: list[Any], n: int) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The group columns of ``n`` rows as codes (one row per column), the strides that make
    a row's group number ``strides @ codes[:, i]``, and every group number's key (the
    columns' raw values; none without rows)."""
    codes = scratch("group codes", (len(groups), n), np.int32)
    levels = [_codes(g, codes[j]) for j, g in enumerate(groups)]
    sizes = [len(v) for v in levels]
    n_groups = math.prod(sizes)  # Python's integers: no overflow however many columns
    if n_groups > MAX_KEYS:
        raise ValueError(too_many_keys(n_groups))
    strides = np.array([np.prod(sizes[j + 1:], dtype=np.int64) for j in range(len(sizes))],
                       dtype=np.int64)
    keys = [tuple(levels[c][i] for c, i in enumerate(np.unravel_index(g, sizes)))
            for g in range(n_groups)] if n else []
    return codes, strides, keys


def audit_block(groups: list[Any], y_true: Any, y_pred: Any, score: Any = None,
                weight: Any = None, pos_label: Any = 1) -> AuditBlock:
    """Block function: the statistics of one block of rows (columns as numpy or pandas);
    the groups keep their raw values (missing: MISSING)."""
    # each column converted once, read-only for the kernels (one compiled signature)
    s = _read_only(np.zeros(0) if score is None else
                   np.ascontiguousarray(score, dtype=np.float64).ravel())
    w = None if weight is None else np.asarray(weight, dtype=np.float64).ravel()
    _check_inputs(None if score is None else s, w)
    truth, seen_true = _binary(y_true, "y_true", pos_label)
    decision, seen_pred = _binary(y_pred, "y_pred", pos_label)
    lengths = {len(truth), len(decision)} | ({len(s)} if score is not None else set()) | (
        {len(w)} if w is not None else set())
    if len(lengths) > 1:  # the kernels index without bounds checks
        raise ValueError(f"every input needs one value per row; got {sorted(lengths)} rows.")
    codes, strides, group_keys = coded_groups(groups, len(truth))
    n_groups = len(group_keys)
    # scores in [0, 1] are counted in a dense table (int32) where it is small beside the rows
    dense = score is not None and n_groups * 2 * UNIT_BINS <= 4 * len(s) < 2**33
    rows = np.zeros(n_groups * 4, dtype=np.int64)
    table = _zeroed_table(n_groups * 2 if dense else 0)
    outside = tally(codes, strides, truth, decision, s if dense else s[:0], UNIT_BINS, rows,
                    table)
    group = strides @ codes if w is not None or outside or (
        score is not None and not dense) else None
    present = np.flatnonzero(rows)
    keys = tuple((*group_keys[c // 4], (c // 2) % 2, c % 2) for c in present)
    values: tuple[np.ndarray, ...] = (rows[present],)
    if w is not None:
        cell = group * 4 + truth * 2 + decision
        parts = _exact_parts(w, cell, n_groups * 4)
        values = (*values, parts[present])
    histograms = None
    if score is not None:
        histograms = _score_histograms(table if dense else None, outside, group, truth, s,
                                       group_keys)
    return AuditBlock(Keyed(keys, values), histograms, (seen_true, seen_pred))


def _score_histograms(table: np.ndarray | None, outside: int, group: np.ndarray,
                      truth: np.ndarray, score: np.ndarray, keys: list[tuple[Any, ...]]
                      ) -> dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]]:
    """Per (group, label) key: its sorted distinct score bins and their rows, from the dense
    table of unit bins (the scores outside [0, 1] sorted and merged in), or, without a
    table, from sorting every row's bin."""
    if table is None:
        return _histograms(group, truth, score_bins(score), keys)
    out = _table_histograms(table, keys)
    if outside:  # the table holds the scores in [0, 1] only
        far = np.flatnonzero((score < 0) | (score > 1))
        out = _merge_histograms(out, _histograms(group[far], truth[far],
                                                  score_bins(score[far]), keys))
    return out


def _zeroed_table(n_rows: int) -> np.ndarray:
    """A zeroed ``(n_rows, UNIT_BINS)`` int32 table, from the thread's scratch memory."""
    table = scratch("score table", (n_rows, UNIT_BINS), np.int32)
    table.fill(0)
    return table


def _table_histograms(table: np.ndarray, keys: list[tuple[Any, ...]]
                      ) -> dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]]:
    """Per (group, label) key: the occupied bins of its row of the dense table of unit bins,
    as :func:`score_bins` numbers them, and their rows."""
    nonzero = np.count_nonzero(table)
    bins, counts = np.empty(nonzero, dtype=np.int32), np.empty(nonzero, dtype=np.int64)
    starts = np.empty(table.shape[0] + 1, dtype=np.int64)
    if occupied(table, 2**15, bins, counts, starts) != nonzero:
        raise RuntimeError("a score table's occupied cells changed while they were read.")
    out = {}
    for k in np.flatnonzero(np.diff(starts)):
        g, y = divmod(int(k), 2)
        out[(*keys[g], y)] = (bins[starts[k]:starts[k + 1]], counts[starts[k]:starts[k + 1]])
    return out


def merge_sorted(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Two histograms (sorted distinct bins, rows) as one."""
    size = len(a[0]) + len(b[0])
    bins, counts = np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int64)
    m = merge_runs(*(_read_only(np.asarray(x, dtype=t)) for x, t in
                     ((a[0], np.int32), (a[1], np.int64), (b[0], np.int32), (b[1], np.int64))),
                   bins, counts)
    return bins[:m], counts[:m]


def _merge_histograms(*parts: dict[Any, tuple[np.ndarray, np.ndarray]]) -> dict[Any, Any]:
    """Histograms keyed alike as one, key by key."""
    runs: dict[Any, list[tuple[np.ndarray, np.ndarray]]] = {}
    for part in parts:
        for key, hist in part.items():
            runs.setdefault(key, []).append(hist)
    return {key: hists[0] if len(hists) == 1 else _merge_runs(hists)
            for key, hists in runs.items()}


def _merge_runs(hists: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Several histograms of one key as one: added in a dense accumulator of the thread's
    scratch memory where their bins' range is narrow (as the unit bins of probabilities
    are), else merged pairwise."""
    hists = [h for h in hists if len(h[0])]
    if len(hists) < 2:
        return hists[0] if hists else (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64))
    size = sum(len(h[0]) for h in hists)
    lo, hi = min(int(h[0][0]) for h in hists), max(int(h[0][-1]) for h in hists)  # sorted
    if hi - lo >= 4 * size:
        return functools.reduce(merge_sorted, hists)
    dense = scratch("merged bins", hi - lo + 1, np.int64)
    dense.fill(0)
    for bins, counts in hists:
        if add_run(_read_only(np.asarray(bins, dtype=np.int32)),
                   _read_only(np.asarray(counts, dtype=np.int64)), lo, dense) < 0:
            raise ValueError("a histogram's bins are not sorted, or its lengths differ.")
    nonzero = np.count_nonzero(dense)
    bins, counts = np.empty(nonzero, dtype=np.int32), np.empty(nonzero, dtype=np.int64)
    dense_cells(dense, lo, bins, counts)
    return bins, counts


def merge_blocks(*blocks: AuditBlock) -> AuditBlock:
    """The sum of blocks: cell by cell, and bin by bin."""
    full = [b for b in blocks if b.cells.keys]
    if len(full) < 2:
        return full[0] if full else blocks[0]
    histograms = None
    if all(b.histograms is not None for b in full):
        histograms = _merge_histograms(*(b.histograms for b in full))
    labels = (frozenset().union(*(b.labels[0] for b in full)),
              frozenset().union(*(b.labels[1] for b in full)))
    return AuditBlock(functools.reduce(merge, (b.cells for b in full)), histograms, labels)
