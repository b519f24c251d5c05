"""numba kernels of an audit's block (docs/design.md#audits-in-one-pass): codes of a text
column read from its Arrow buffers, and one loop over the rows that counts the (group,
label, decision) cells and the scores' histogram bins."""

from __future__ import annotations

import math

import numpy as np

from .._compiled import compiled
from .._keyed import MAX_KEYS

__all__ = ["SLOTS", "add_run", "dense_cells", "merge_runs", "occupied", "tally", "text_codes",
           "unit_bin", "unit_bin_all"]

#: Slots of the open-addressing table of distinct texts: a power of two, at least twice
#: MAX_KEYS, so a probe sequence stays short.
SLOTS = 1 << (2 * MAX_KEYS - 1).bit_length()
_SLOT_BITS = SLOTS.bit_length() - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: Fibonacci hashing
_LONG = np.uint64(1 << 63)


@compiled(inline="always")
def _same_text(data: np.ndarray, a: int, b: int, n: int) -> bool:
    for q in range(n):
        if data[a + q] != data[b + q]:
            return False
    return True


@compiled(inline="always")
def _word(words: np.ndarray, lo: int) -> np.uint64:
    # the 8 bytes from byte lo, from the two words that hold them (r = 0: the second adds 0)
    w, r = lo >> 3, np.uint64(8 * (lo & 7))
    return (words[w] >> r) | ((words[w + 1] << np.uint64(1)) << (np.uint64(63) - r))


@compiled
def text_codes(offsets: np.ndarray, data: np.ndarray, words: np.ndarray, first: int,
               valid: np.ndarray, start: int, codes: np.ndarray, firsts: np.ndarray,
               slot_keys: np.ndarray, slot_codes: np.ndarray) -> int:
    """Code each text by first appearance, into ``codes`` (-1: missing); the row of each
    code's first appearance into ``firsts``. Returns the number of codes, -1 after more than
    MAX_KEYS, or -2 at a row whose offsets decrease or leave ``[first, offsets[-1]]``.

    Row i's bytes are ``data[offsets[i]:offsets[i + 1]]``, and ``words`` holds
    ``data[first:offsets[-1]]`` as little-endian 8-byte words, with a spare word after them.
    A row is valid where bit ``start + i`` of ``valid`` is set (an empty ``valid``: every
    row). ``slot_keys`` and ``slot_codes`` hold SLOTS zeros. The caller checks the lengths:
    ``offsets`` one longer than ``codes``, ``offsets[0] >= 0``, ``offsets[-1] <=
    len(data)``, ``valid`` empty or of ``(start + len(codes) + 7) // 8`` bytes at least.
    """
    k = 0
    last = offsets[offsets.shape[0] - 1]
    for i in range(codes.shape[0]):
        j = start + i
        if valid.shape[0] and not (valid[j >> 3] >> (j & 7)) & 1:
            codes[i] = -1
            continue
        if not offsets[0] <= offsets[i] <= offsets[i + 1] <= last:  # every byte read lies within
            return -2
        lo, n = offsets[i], offsets[i + 1] - offsets[i]
        # the key: a text of up to 7 bytes is its bytes and its length (below 8, in the top
        # byte: equal keys are equal texts); a longer one its first 8 bytes with the top
        # bit set, so it never equals a short text's key, told apart by comparing the rest
        word = _word(words, lo - first)
        if n < 8:
            key = (word & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1))) | (
                np.uint64(n) << np.uint64(56))
        else:
            key = word | _LONG
        slot = np.int64((key * _GOLDEN) >> np.uint64(64 - _SLOT_BITS))
        while True:
            c = slot_codes[slot] - 1
            if c < 0:  # a new text
                if k == MAX_KEYS:
                    return -1
                slot_keys[slot], slot_codes[slot] = key, k + 1
                firsts[k] = i
                codes[i] = k
                k += 1
                break
            if slot_keys[slot] == key:
                if n < 8:
                    codes[i] = c
                    break
                f = firsts[c]
                if offsets[f + 1] - offsets[f] == n and _same_text(data, offsets[f] + 8,
                                                                   lo + 8, n - 8):
                    codes[i] = c
                    break
            slot = (slot + 1) & (SLOTS - 1)
    return k


@compiled(inline="always")
def _nonzero_into(values: np.ndarray, offset: int, bins: np.ndarray, counts: np.ndarray,
                  m: int, room: int) -> int:
    """Append the nonzero entries of 1-D ``values`` from position ``m``: their index plus
    ``offset`` into ``bins``, their value into ``counts``, written only below ``room``;
    returns the new position."""
    for c in range(values.shape[0]):
        v = values[c]
        if m < room:  # written before it is known to be nonzero: no branch on v
            bins[m], counts[m] = c + offset, v
        m += v != 0
    return m


@compiled
def occupied(table: np.ndarray, offset: int, bins: np.ndarray, counts: np.ndarray,
             starts: np.ndarray) -> int:
    """The nonzero cells of a 2-D table in row-major order: their column plus ``offset`` and
    their value into ``bins`` and ``counts``, and where each row's cells start into
    ``starts`` (``table.shape[0] + 1`` long, the last: their number). Returns how many
    cells are nonzero (-1: ``starts`` of another length); cells past the length of ``bins``
    and ``counts`` are counted, not written."""
    if starts.shape[0] != table.shape[0] + 1:
        return -1
    m = 0
    room = min(bins.shape[0], counts.shape[0])
    for r in range(table.shape[0]):
        starts[r] = m
        m = _nonzero_into(table[r], offset, bins, counts, m, room)
    starts[table.shape[0]] = m
    return m


@compiled(inline="always")
def unit_bin(s: float, unit_bins: int) -> int:
    """The bin b in [0, unit_bins) of a score s in [0, 1] with ``b / unit_bins < s <= (b + 1)
    / unit_bins`` (bin 0 also holds 0), the boundaries compared as the floats ``b /
    unit_bins``: ``s * unit_bins`` may round across one, so within 1e-6 of a boundary the
    two divisions decide (elsewhere the product's rounding, below 1e-11, cannot)."""
    x = s * unit_bins
    c = math.ceil(x)
    b = min(max(np.int64(c) - 1, 0), unit_bins - 1)
    if c - x < 1e-6 or x - (c - 1.0) < 1e-6:
        if b > 0 and s <= b / unit_bins:
            b -= 1
        elif b < unit_bins - 1 and s > (b + 1) / unit_bins:
            b += 1
    return b


@compiled
def unit_bin_all(scores: np.ndarray, unit_bins: int, out: np.ndarray) -> None:
    """:func:`unit_bin` of every score in [0, 1] into ``out`` (as long as ``scores``)."""
    for i in range(scores.shape[0]):
        out[i] = unit_bin(scores[i], unit_bins)


@compiled
def tally(codes: np.ndarray, strides: np.ndarray, truth: np.ndarray, decision: np.ndarray,
          score: np.ndarray, unit_bins: int, rows: np.ndarray, histogram: np.ndarray) -> int:
    """Add each row i, of group ``g = strides @ codes[:, i]``, to ``rows[g * 4 + truth * 2 +
    decision]`` and, for a score in [0, 1], to ``histogram[g * 2 + truth, unit_bin(score,
    unit_bins)]`` (an empty ``score``: none). Returns the number of scores outside [0, 1],
    which the caller bins itself."""
    outside = 0
    for i in range(truth.shape[0]):
        g = 0
        for c in range(codes.shape[0]):
            g += codes[c, i] * strides[c]
        g = g * 2 + truth[i]
        rows[g * 2 + decision[i]] += 1
        if score.shape[0]:
            s = score[i]
            if 0.0 <= s <= 1.0:
                histogram[g, unit_bin(s, unit_bins)] += 1
            else:
                outside += 1
    return outside


@compiled
def add_run(bins: np.ndarray, counts: np.ndarray, lo: int, dense: np.ndarray) -> int:
    """Add a histogram (bins and their rows) into ``dense``, whose cell ``b - lo`` is bin b.
    Returns 0, or -1 (nothing added) when a bin lies outside ``dense`` or the lengths
    differ."""
    if bins.shape[0] != counts.shape[0]:
        return -1
    for i in range(bins.shape[0]):
        if not 0 <= bins[i] - lo < dense.shape[0]:
            return -1
    for i in range(bins.shape[0]):
        dense[bins[i] - lo] += counts[i]
    return 0


@compiled
def dense_cells(dense: np.ndarray, lo: int, bins: np.ndarray, counts: np.ndarray) -> int:
    """The nonzero cells of ``dense`` as bins ``lo + cell`` and their rows, into ``bins`` and
    ``counts``; returns how many (cells past their length are counted, not written)."""
    return _nonzero_into(dense, lo, bins, counts, 0, min(bins.shape[0], counts.shape[0]))


@compiled
def merge_runs(a_bins: np.ndarray, a_counts: np.ndarray, b_bins: np.ndarray,
               b_counts: np.ndarray, bins: np.ndarray, counts: np.ndarray) -> int:
    """Two histograms (sorted distinct bins and their rows) as one, into ``bins`` and
    ``counts`` (long enough for both); returns its length."""
    i = j = m = 0
    while i < a_bins.shape[0] and j < b_bins.shape[0]:
        if a_bins[i] < b_bins[j]:
            bins[m], counts[m] = a_bins[i], a_counts[i]
            i += 1
        elif b_bins[j] < a_bins[i]:
            bins[m], counts[m] = b_bins[j], b_counts[j]
            j += 1
        else:
            bins[m], counts[m] = a_bins[i], a_counts[i] + b_counts[j]
            i += 1
            j += 1
        m += 1
    for r in range(i, a_bins.shape[0]):
        bins[m], counts[m] = a_bins[r], a_counts[r]
        m += 1
    for r in range(j, b_bins.shape[0]):
        bins[m], counts[m] = b_bins[r], b_counts[r]
        m += 1
    return m
