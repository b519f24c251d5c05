"""``daskfair show``: a stored run's kind, status, parameters, results and arrays."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["show_run"]


def brief(value: Any, width: int = 96) -> str:
    """A value on one line of at most ``width`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def _unfinished_advice(run: Any) -> str:
    """What to do with a run that did not finish, for its kind."""
    from ..store.access import RESUMABLE_KINDS

    if run.kind == "demo":  # the demo replaces its own run, and has no --overwrite
        return "run daskfair demo again (it replaces its own run)."
    if run.kind in RESUMABLE_KINDS and run.status == "running":
        return "continue it with the same command and --resume, or replace it with --overwrite."
    return "run the command again with --overwrite."


def _status(run: Any) -> str:
    info = run.info
    if run.is_complete:
        return f"complete (started {info.get('created')}, finished {info.get('completed')})"
    ckpt = run.checkpoint
    where = f"last checkpoint at iteration {ckpt['iteration']}" if ckpt else "no checkpoint yet"
    return (f"INCOMPLETE: the run did not finish (started {info.get('created')}; {where}).\n"
            "           Not a result: " + _unfinished_advice(run))


def _model(tree: Any, depth: int = 0) -> str:
    """A stored model's classes, outermost first: ``Pipeline(TableEncoder, ...)`` (as the
    tree names them: ``daskfair.load`` checks them)."""
    if not isinstance(tree, dict) or depth > 8:
        return "?"
    name = str(tree.get("class", "?")).rsplit(".", 1)[-1][:40]
    if name != "Pipeline":
        return name
    try:
        steps = dict(tree["params"]["items"])["steps"]
        inner = [_model(s["items"][1], depth + 1) for s in steps]
    except (KeyError, IndexError, TypeError, ValueError):
        return "Pipeline(?)"
    return f"Pipeline({', '.join(inner)})"


def _results(run: Any) -> None:
    results = {k: v for k, v in run.attrs.items()
               if k not in {"daskfair", "params", "checkpoint", "history"}}
    if "model" in results:  # its tree is for daskfair.load, not for reading
        results["model"] = f"{_model(results['model'])} (daskfair.load or daskfair predict)"
    if results:
        print("results:")
    for key, value in results.items():
        if isinstance(value, dict):  # tables: one line per entry
            print(f"  {key}:")
            for sub, v in value.items():
                print(f"    {sub:<20} {brief(v, 94)}")
        else:
            print(f"  {key:<22} {brief(value)}")


def _refused_model(run: Any) -> str | None:
    """Why ``daskfair.load`` would refuse the run's model (None: it would not, or no model)."""
    from ..models import UnsafeModelError
    from ..models.io import MODEL_KEY, check_model
    from ..store import StoreError

    if not run.is_complete or MODEL_KEY not in run.attrs:
        return None
    try:
        check_model(run)
    except (UnsafeModelError, StoreError) as exc:
        return str(exc)
    return None


def show_run(path: str) -> int:
    """Print the run at ``path``; 0 when it is complete, 1 when it is not (or corrupt)."""
    from ..store import CorruptStoreError, open_run
    from ..store.lease import lease_status

    run = open_run(path, allow_incomplete=True, verify=None)
    print(f"run:       {run.path}")
    print(f"kind:      {run.kind}")
    try:
        run.verify(contents=True)
    except CorruptStoreError as exc:
        print(f"status:    CORRUPT: {exc}")
        return 1
    lock = lease_status(run.path)
    if lock:
        print(f"lock:      {lock}")
    refused = _refused_model(run)
    if refused:
        print(f"model:    refused: {refused}")
        return 1
    print(f"status:    {_status(run)}")
    if run.digest:
        print(f"digest:    {run.digest} (compare with the one its sender published)")
    versions = run.info.get("versions", {})
    print("software:  " + ", ".join(f"{k} {versions[k]}" for k in
                                     ("daskfair", "dask", "distributed", "zarr", "numpy")
                                     if k in versions))
    print("parameters:")
    for key, value in run.params.items():
        if value is not None:
            print(f"  {key:<22} {brief(value)}")
    _results(run)
    arrays = run.layouts()
    model = [a for name, a in arrays.items() if name.startswith("model/")]
    arrays = {k: v for k, v in arrays.items() if not k.startswith("model/")}
    if arrays or model:
        print("arrays:")
    if model:
        size = sum(a.nbytes for a in model) / 1e6
        print(f"  {'model/':<22} {len(model)} arrays of the model, {size:.1f} MB")
    for name, a in sorted(arrays.items()):
        print(f"  {name:<22} {a.shape} {a.dtype}")
    return 0 if run.is_complete else 1
