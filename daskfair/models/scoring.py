"""Predictions for a table of any size, written as Parquet by the workers, partition by
partition; the client holds neither the table nor the predictions."""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pandas as pd
from sklearn.pipeline import Pipeline

from .. import progress
from .._files import check_output_path, partial_name, read_bounded
from .._frames import partitions
from ..scaling import ColumnScaler
from ..tables import TableEncoder, read_table
from ..tables.summary import is_text

__all__ = ["MARKER", "OUTPUT_COLUMNS", "Scorer", "check_prediction", "predict_table"]

#: The file that marks a finished predictions folder (and that daskfair wrote it), listing
#: the files daskfair wrote there: only those are ever removed.
MARKER = "_daskfair.json"
MARKER_LIMIT = 2**20
_PART = re.compile(r"part\.\d{6,}\.parquet")
#: The columns a prediction adds, by kind of model.
OUTPUT_COLUMNS = {"classifier": ("prediction", "decision", "probability"),
                  "regressor": ("prediction",), "clusterer": ("cluster",)}


@dataclass(frozen=True)
class Scorer:
    """A model split into its encoder, its other transforms and its final estimator."""

    encoder: TableEncoder | None
    transforms: tuple[Any, ...]
    final: Any

    @classmethod
    def of(cls, model: Any) -> Scorer:
        steps = [s for _, s in model.steps] if isinstance(model, Pipeline) else [model]
        encoder = steps[0] if isinstance(steps[0], TableEncoder) else None
        return cls(encoder, tuple(steps[1 if encoder else 0:-1]), steps[-1])

    @property
    def kind(self) -> str:
        if hasattr(self.final, "predict_from_decision"):
            return "classifier"
        return "clusterer" if hasattr(self.final, "cluster_centers_") else "regressor"

    @property
    def columns(self) -> list[str]:
        """The table columns the model reads."""
        if self.encoder is not None:
            return [str(c) for c in self.encoder.feature_names_in_]
        names = getattr(self.transforms[0] if self.transforms else self.final,
                        "feature_names_in_", None)
        if names is None:
            raise ValueError(
                "this model was fitted on an array without column names, so it cannot read a "
                "table: train it on a table (daskfair fkr --input TABLE), or predict in "
                "Python with model.predict(X).")
        return [str(c) for c in names]

    def check_table(self, meta: pd.DataFrame, keep: Sequence[str]) -> None:
        """The table has every column the model reads and ``keep``, of the kinds it needs."""
        missing = [c for c in [*self.columns, *keep] if c not in meta.columns]
        if missing:
            raise ValueError(f"the table has no column(s) {missing}, which the model needs "
                             f"(it reads {self.columns}); its columns are {list(meta.columns)}.")
        clash = sorted(set(keep) & set(OUTPUT_COLUMNS[self.kind]))
        if clash:
            raise ValueError(f"the table's column(s) {clash} would clash with the columns the "
                             "predictions add; rename them in the table.")
        text = set(self.encoder.levels_) if self.encoder is not None else set()
        for c in self.columns:
            if c not in text and is_text(meta[c].dtype):
                raise ValueError(f"column {c!r} holds text in the table, but numbers when the "
                                 "model was trained: give it as numbers.")
            levels = self.encoder.levels_.get(c, []) if self.encoder is not None else []
            if levels and all(isinstance(v, str) for v in levels) \
                    and not is_text(meta[c].dtype):
                raise ValueError(f"column {c!r} holds {meta[c].dtype} numbers in the table, "
                                 "but text when the model was trained: read it as text.")

    def score(self, part: pd.DataFrame, keep: Sequence[str]
              ) -> tuple[pd.DataFrame, dict[str, int]]:
        """One partition's predictions (with its ``keep`` columns) and its unseen levels."""
        unseen: dict[str, int] = {}
        if self.encoder is not None:
            X, unseen = self.encoder.transform_counted(part)
        else:
            X = part[self.columns].to_numpy(dtype=np.float64)
        for step in self.transforms:
            # the encoder's output is this call's own: a scaler may work in it
            owned = self.encoder is not None and isinstance(step, ColumnScaler)
            X = step.transform_into(X) if owned else step.transform(X)
        out = {c: part[c].to_numpy() for c in keep}
        if self.kind == "classifier":
            d = self.final.decision_function(X)
            out.update(prediction=self.final.predict_from_decision(d), decision=d,
                       probability=self.final.proba_from_decision(d)[:, 1])
        else:
            out[OUTPUT_COLUMNS[self.kind][0]] = self.final.predict(X)
        return pd.DataFrame(out), unseen


def _write_part(part: pd.DataFrame, scorer: Scorer, keep: Sequence[str], folder: str,
                i: int) -> tuple[int, dict[str, int]]:
    """Score and write one partition as ``part.{i}.parquet``: its rows and unseen levels."""
    frame, unseen = scorer.score(part, keep)
    frame.to_parquet(os.path.join(folder, f"part.{i:06d}.parquet"), index=False)
    return len(frame), unseen


def _marked_files(output: Path) -> list[str] | None:
    """The files a predictions folder's marker lists (its own name included), or None when
    ``output`` holds no marker daskfair wrote."""
    try:
        marker = json.loads(read_bounded(output / MARKER, MARKER_LIMIT))
    except (OSError, ValueError):
        return None
    files = marker.get("files") if isinstance(marker, dict) else None
    if marker.get("kind") != "predictions" or not isinstance(files, list) or not all(
            isinstance(f, str) and _PART.fullmatch(f) for f in files):
        return None
    return [*files, MARKER]


def _check_output(output: Path, overwrite: bool) -> list[str]:
    """``output`` is new, an empty folder, or (``overwrite``) predictions daskfair wrote and
    nothing else; returns the files to remove when it is replaced."""
    check_output_path(output, "the predictions folder")
    if not output.exists():
        parent = output.parent
        if not parent.is_dir():
            raise ValueError(f"cannot write {output}: {parent} is not a directory.")
        if not os.access(parent, os.W_OK):
            raise PermissionError(f"cannot write {output}: no write permission in {parent}.")
        return []
    if output.is_dir() and not any(output.iterdir()):
        return []
    ours = _marked_files(output) if output.is_dir() else None
    if ours is None:
        raise FileExistsError(
            f"{output} exists and is not a predictions folder daskfair wrote; daskfair never "
            "replaces what it did not write, overwrite=True included. Choose another output.")
    with os.scandir(output) as it:  # links are entries of their own, never followed
        present = {e.name: e.is_file(follow_symlinks=False) for e in it}
    foreign = sorted(name + ("" if plain else "/") for name, plain in present.items()
                     if not (plain and name in ours))
    if foreign:
        raise FileExistsError(
            f"{output} holds predictions daskfair wrote and {len(foreign)} entries it did not "
            f"({', '.join(foreign[:5])}); nothing in it is replaced. Move those out, or "
            "choose another output.")
    if not overwrite:
        raise FileExistsError(f"{output} holds predictions already: pass overwrite=True "
                              "(--overwrite) to replace them, or choose another output.")
    return sorted(present)


def check_prediction(model: Any, table: Any, output: str | os.PathLike[str], *,
                     keep: Sequence[str] = (), overwrite: bool = False) -> Any:
    """What :func:`predict_table` checks before any work: the output may be written, and the
    table has the model's columns (of the right kinds) and ``keep``.

    Parameters
    ----------
    model, table, output, keep, overwrite : as in :func:`predict_table`.

    Returns
    -------
    dask.dataframe.DataFrame
        The columns of ``table`` the prediction reads (lazy).
    """
    import dask.dataframe as dd

    scorer, keep = Scorer.of(model), [str(c) for c in keep]
    _check_output(Path(output).absolute(), overwrite)
    if isinstance(table, pd.DataFrame):
        table = dd.from_pandas(table, npartitions=1, sort=False)
    elif not hasattr(table, "to_delayed"):
        table = read_table(Path(table).absolute())
    scorer.check_table(table._meta, keep)
    return table[list(dict.fromkeys([*scorer.columns, *keep]))]


def predict_table(model: Any, table: Any, output: str | os.PathLike[str], *,
                  keep: Sequence[str] = (), overwrite: bool = False) -> dict[str, Any]:
    """Predict every row of a table into a Parquet folder, one file per partition.

    The rows are read, encoded, scaled and predicted where each partition is read; the
    folder appears at ``output`` only once every partition is written (an interrupted call
    leaves a hidden ``.NAME.partial-*`` folder, never an ``output`` that looks complete).

    Parameters
    ----------
    model : estimator
        A fitted model or ``Pipeline`` (:func:`daskfair.load`), its first step a TableEncoder
        or its columns named by ``feature_names_in_``.
    table : path-like or dask/pandas DataFrame
        The rows to predict (a path as :func:`daskfair.read_table` reads it).
    output : path-like
        A new folder (or an empty one, or predictions to replace with ``overwrite``).
    keep : sequence of str, default=()
        Table columns copied into the predictions (an id, say).
    overwrite : bool, default=False
        Replace predictions daskfair wrote at ``output`` (nothing else is ever replaced).

    Returns
    -------
    dict
        ``output`` (absolute), ``rows``, ``partitions``, ``columns`` and ``unseen`` (rows
        per text column with a level the model had not seen, encoded as all zeros).

    Raises
    ------
    ValueError, FileExistsError
        A missing column, a column of the wrong kind, or an output that may not be written
        (before any work starts).
    """
    scorer, keep = Scorer.of(model), [str(c) for c in keep]
    output = Path(output).absolute()
    table = check_prediction(model, table, output, keep=keep, overwrite=overwrite)
    scratch = partial_name(output)
    scratch.mkdir()  # exclusive: never a folder (or a link) someone left
    try:
        # the model is one key of the graph, sent to each worker once (not with every task)
        model_key = dask.delayed(scorer, name=f"daskfair-model-{uuid.uuid4().hex}")
        tasks = [dask.delayed(_write_part, pure=False)(p, model_key, keep, str(scratch), i)
                 for i, p in enumerate(partitions(table))]
        done = progress.compute(dask.delayed(list)(tasks))
        unseen: Counter[str] = Counter()
        for _, counts in done:
            unseen.update(counts)
        report = {"output": str(output), "rows": int(sum(n for n, _ in done)),
                  "partitions": len(done), "columns": [*keep, *OUTPUT_COLUMNS[scorer.kind]],
                  "unseen": dict(sorted(unseen.items()))}
        files = sorted(p.name for p in scratch.iterdir())
        (scratch / MARKER).write_text(json.dumps({"kind": "predictions", "files": files,
                                                   **report}))
        for name in _check_output(output, overwrite):  # again: it may have changed meanwhile
            (output / name).unlink()
        if output.exists():
            output.rmdir()
        scratch.rename(output)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return report
