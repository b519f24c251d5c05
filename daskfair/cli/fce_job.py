"""The ``fce`` job: base clusterings and their fair FCE consensus, scored against them."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from .._validation import is_dask
from ..metrics import REPORT_COLUMNS, clustering_report
from ..progress import IterationBar
from ..store import Run
from .inputs import JobData, to_dask
from .results import MERGE_WARNING, merged_sizes, numpy_of, store_encoder

__all__ = ["fce_job", "format_fce_report"]

Echo = Callable[[str], Any]


def _code_block(block: np.ndarray, index: pd.Index) -> np.ndarray:
    return index.get_indexer(block.astype(object)).astype(np.int32)


def _codes(values: Any, levels: Sequence[Any]) -> Any:
    """Values as int32 codes of ``levels``, block by block (small enough to keep in the
    cluster's memory)."""
    index = pd.Index(list(levels), dtype=object)
    return values.map_blocks(_code_block, index, dtype=np.int32,
                             name=f"codes-{dask.base.tokenize(values, list(levels))}")


def _labels_and_groups(data: JobData) -> tuple[Any, Any]:
    """The classes (or None) and groups the reports read, held where they are read again."""
    if data.summary is None:
        return numpy_of(data.y), numpy_of(data.sensitive)
    # a table's label and groups as codes, kept on the workers: every report reads them
    # again, and would otherwise read the table again
    cols = data.summary.columns
    y = None if data.y is None else _codes(data.y, sorted(cols[data.description["label"]]
                                                          .counts))
    s = _codes(data.sensitive, sorted(cols[data.description["sensitive"]].counts))
    return dask.persist(y, s)


def _group_sizes(data: JobData | None, s: Any) -> tuple[np.ndarray, dict[Any, int]]:
    """The values of ``s`` (a table's: codes of its sorted groups), and each group's rows by
    its name (a table's from its pass: nothing is read)."""
    if data is not None and data.summary is not None:
        counts = data.summary.columns[data.description["sensitive"]].counts
        return np.arange(len(counts)), {k: counts[k] for k in sorted(counts)}
    values, rows = np.unique(s, return_counts=True)
    return values, dict(zip(values.tolist(), rows.tolist(), strict=True))


def _lookup(block: np.ndarray, values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return codes[np.searchsorted(values, block)]


def _as_fitted(s: Any, values: np.ndarray, fce: Any) -> Any:
    """``s`` (of ``values``) as codes of the groups the fitted ensemble used: its small groups
    merged (``merged_groups_``) as the reports must count them."""
    if not fce.merged_groups_:
        return s
    names = [str(g) for g in fce.groups_]
    other = (set(names) - {str(v) for v in values}).pop()
    codes = np.array([names.index(other if str(v) in fce.merged_groups_ else str(v))
                      for v in values])
    if is_dask(s):
        return s.map_blocks(_lookup, values, codes, dtype=codes.dtype)
    return _lookup(np.asarray(s), values, codes)


def _kept_base(run: Run, resume: bool, chunk_rows: int, echo: Echo,
               make: Callable[[], Any]) -> Any:
    """The base clusterings ``make()`` returns, made once and kept in the run as
    ``base_labels`` (a resumed job reads them instead of making them again)."""
    if resume and run.attrs.get("base_done"):
        echo("base clusterings read from the store")
    else:
        labels = make()
        run.write_array("base_labels", labels, chunks=(chunk_rows, labels.shape[1]))
        run.set_attrs(base_done=True)
    return da.from_zarr(run.group["base_labels"])


def _clustered(data: JobData, client: Any, base_params: Mapping[str, Any],
               chunk_rows: int, echo: Echo) -> Any:
    """The base clusterings of the features, each a task."""
    from ..ensemble import base_clusterings
    from ..scaling import ColumnScaler

    X = ColumnScaler("standard").fit_transform(to_dask(data.X, chunk_rows))
    echo(f"{base_params.get('n_runs', 20)} base clusterings "
         f"({', '.join(base_params.get('methods', ['kmeans']))}"
         f", c = {base_params['n_clusters']}) of {X.shape[0]:,} rows, each a task")
    return base_clusterings(X, **base_params, client=client)


def _renumber(block: np.ndarray, levels: list[np.ndarray]) -> np.ndarray:
    return np.column_stack([np.searchsorted(v, block[:, j]) for j, v in enumerate(levels)])


def _renumbered(data: JobData, echo: Echo) -> Any:
    """A table's columns of cluster ids (any integers, as other tools number them), each
    renumbered 0 .. c_i − 1 in the order of its ids."""
    X = data.X
    levels = dask.compute(*(da.unique(X[:, j]) for j in range(X.shape[1])))
    for name, v in zip(data.columns, levels, strict=True):
        bad = v[v != np.round(v)]
        if bad.size:
            raise ValueError(f"--base-labels column {name!r} holds {bad[0]!r}, not a "
                             "whole number: cluster ids are integers.")
    echo(f"{X.shape[1]} base clusterings read from the table, of "
         + ", ".join(f"{len(v)}" for v in levels) + " clusters")
    return X.map_blocks(_renumber, list(levels), dtype=np.int64)


def _report(y: np.ndarray | None, labels: Any, s: Any, c: int) -> dict[str, float]:
    if y is None:
        # without classes ACC and NMI are undefined: the fairness and capacity columns are
        # computed against a dummy class vector and ACC/NMI dropped
        zeros = da.zeros_like(s, dtype=np.int64) if is_dask(s) else np.zeros(len(s), np.int64)
        rep = clustering_report(zeros, labels, sensitive_features=s, n_clusters=c)
        return {k: v for k, v in rep.items() if k not in ("ACC", "NMI")}
    return clustering_report(y, labels, sensitive_features=s, n_clusters=c)


def _scores(fce: Any, base: Any, y: Any, s: Any, seconds: float) -> dict[str, Any]:
    """The consensus's metrics and the base clusterings' mean and spread of each."""
    c = fce.n_clusters_
    consensus = _report(y, fce.labels_, s, c)
    # a base clustering with more clusters than the consensus (a pool's, base_n_clusters)
    # is scored with its own number of clusters
    own = np.maximum(c, np.asarray(dask.compute(base.max(axis=0))[0]) + 1)
    reports = np.array([[_report(y, base[:, j], s, int(own[j]))[k] for k in consensus]
                        for j in range(base.shape[1])])
    spread = (reports.std(axis=0, ddof=1).tolist() if len(reports) > 1
              else [0.0] * len(consensus))
    return {"n_clusters": c, "n_iter": fce.n_iter_, "converged": fce.converged_,
            "seconds": seconds, "columns": list(consensus), "consensus": consensus,
            "base_mean": dict(zip(consensus, reports.mean(axis=0).tolist(), strict=True)),
            "base_std": dict(zip(consensus, spread, strict=True))}


def fce_job(
    data: JobData | None,
    *,
    run: Run,
    client: Any,
    params: Mapping[str, Any],
    base_params: Mapping[str, Any] | None = None,
    pool: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    resume: bool = False,
    chunk_rows: int = 50_000,
    given: bool = False,
    echo: Echo = print,
) -> dict[str, Any]:
    """Base clusterings (of ``data``'s features with ``base_params``, ``data``'s own columns
    when ``given``, or the first ``n_runs`` of a ``pool``: its labels, classes and groups)
    and their fair FCE consensus
    with ``params``, checkpointed in ``run`` after every iteration; returns the report of
    the consensus against the base clusterings, stored in the run."""
    from ..ensemble import FairClusteringEnsemble

    base_params = dict(base_params or {})
    if pool is not None:
        base, y, s = pool
        base = base[:, :base_params.get("n_runs", 20)]
        echo(f"FCE on a pool of {base.shape[1]} base clusterings of {base.shape[0]:,} rows")
        labels = to_dask(base, chunk_rows)
    else:
        y, s = _labels_and_groups(data)
        labels = base = _kept_base(
            run, resume, chunk_rows, echo,
            (lambda: _renumbered(data, echo)) if given
            else (lambda: _clustered(data, client, base_params, chunk_rows, echo)))
    values, sizes = _group_sizes(data, s)
    _, merged = merged_sizes(sizes, params)
    if merged:
        echo(f"{len(sizes)} groups{merged}")
    fce = FairClusteringEnsemble(**params)
    bar = IterationBar(fce.max_iter, "FCE iterations")
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the merge was said above, by the groups' names
        warnings.filterwarnings("ignore", MERGE_WARNING, UserWarning)
        fce.fit(labels, sensitive_features=to_dask(s, chunk_rows), store=run, resume=resume,
                callback=lambda st: bar.update(st.n_iter, f"objective {st.objective[-1]:.6g}"))
    bar.close()
    summary = _scores(fce, base, y, _as_fitted(s, values, fce), time.perf_counter() - t0)
    store_encoder(run, data)
    run.set_attrs(report=summary)
    return summary


def format_fce_report(summary: Mapping[str, Any]) -> str:
    """The base clusterings' mean ± std and the consensus, one row each."""
    cols = [c for c in REPORT_COLUMNS if c in summary["columns"]]
    head = f"{'':<22}" + "".join(f"{c:>12}" for c in cols)
    base = "".join(f"{summary['base_mean'][c]:>7.3f}±{summary['base_std'][c]:.3f}"[-12:]
                   .rjust(12) for c in cols)
    fair = "".join(f"{summary['consensus'][c]:>12.3f}" for c in cols)
    return "\n".join([head, "-" * len(head), f"{'base clusterings':<22}{base}",
                      f"{'FCE consensus':<22}{fair}"])
