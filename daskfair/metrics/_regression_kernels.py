"""numba kernel of a regression audit's block (docs/design.md#audits-in-one-pass): one loop
over the rows that adds each row's moments to integer accumulators per (group, moment,
binary exponent).

The squares of the predictions and targets are added exactly, as the two floats of Dekker's
exact product, and so is the residual, as ``s + e`` with ``s = fl(t - p)`` and Knuth's
two-sum error ``e``: a variance computed from the sums loses nothing however far the mean is
from 0. ``r²``'s terms in ``e``, the cubes (for the skewness only), ``r⁴`` and ``r⁶`` are
rounded, each once per row."""

from __future__ import annotations

import numpy as np

from .._compiled import compiled

__all__ = ["EXPONENT_SLOTS", "LOWEST_EXPONENT", "N_MOMENTS", "accumulate"]

#: A float64's exponent field as the exponent e of ``x = mantissa * 2**(e - 53)`` with a
#: 53-bit integer mantissa lies in [-1021, 1024] (subnormals at -1021, with fewer bits).
LOWEST_EXPONENT = -1021
EXPONENT_SLOTS = 1024 - LOWEST_EXPONENT + 1
#: The moments, in the order of ``_regression_blocks.MOMENTS``.
N_MOMENTS = 18
#: The moment each of a row's terms adds to (the order ``_terms`` writes them in).
_WHICH = np.array([0, 1, 1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 11, 11, 12, 12, 12, 12, 13, 14,
                   15, 16, 17], dtype=np.int64)
_HALF = 26
_FRACTION = (1 << 52) - 1


@compiled(inline="always")
def _square(x: float) -> tuple[float, float]:
    # Dekker's exact product: x * x == hi + lo, with x split into halves of 26 and 27 bits
    # by Veltkamp's constant 2**27 + 1 (no overflow: |x| < 1e38)
    c = 134217729.0 * x
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    return hi, ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl


@compiled(inline="always")
def _terms(t: float, p: float, out: np.ndarray) -> None:
    # one row's terms, each added to the moment _WHICH names
    s = t - p
    back = s - t
    e = (t - (s - back)) + (-p - back)  # Knuth's two-sum: t - p == s + e exactly
    sign = 1.0 if s > 0 else (-1.0 if s < 0 else 0.0)
    cube_p, cube_t, cube_s, square = p * p * p, t * t * t, s * s * s, s * s
    out[0] = p
    out[1], out[2] = _square(p)
    out[3], out[4], out[5] = cube_p, abs(cube_p), p * cube_p
    out[6] = t
    out[7], out[8] = _square(t)
    out[9], out[10], out[11] = cube_t, abs(cube_t), t * cube_t
    out[12], out[13] = s, e
    out[14], out[15] = abs(s), sign * e
    out[16], out[17] = _square(s)
    out[18], out[19] = 2.0 * s * e, e * e
    out[20], out[21] = cube_s, abs(cube_s)
    fourth = square * square
    out[22], out[23], out[24] = fourth, fourth * square, fourth * fourth


@compiled
def accumulate(group: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, low: int,
               acc: np.ndarray) -> bool:
    """Add every row's moments to ``acc[group, moment, high | low half, exponent - low]``
    (int64, of shape (n_groups, N_MOMENTS, 2, slots)); False if a term's exponent fell
    outside ``[low, low + slots)`` (that term is not added: the caller widens ``acc``).

    A term's float64 bits give its exponent and 53-bit mantissa directly. The caller proves
    the other indices: ``group`` in [0, n_groups), the three arrays of one length, every
    value finite with its eighth power finite; and fewer than 2**32 rows, so no accumulator
    overflows.
    """
    ok = True
    buf = np.empty(_WHICH.shape[0], dtype=np.float64)
    bits = buf.view(np.int64)
    for i in range(group.shape[0]):
        g = group[i]
        _terms(y_true[i], y_pred[i], buf)
        for j in range(buf.shape[0]):
            b = bits[j]
            field = (b >> 52) & 0x7FF
            mantissa = b & _FRACTION
            if field:
                mantissa |= 1 << 52
            elif mantissa == 0:
                continue  # ±0
            if b < 0:
                mantissa = -mantissa
            k = max(field, 1) - 1022 - low
            if k < 0 or k >= acc.shape[3]:
                ok = False
                continue
            acc[g, _WHICH[j], 0, k] += mantissa >> _HALF
            acc[g, _WHICH[j], 1, k] += mantissa & ((1 << _HALF) - 1)
    return ok
