"""One thin function per command: it checks what only the command line knows, builds the
library's parameters from the flags (:func:`~daskfair.cli.params.params_for`) and hands
them to its job."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from .._params import check_arguments
from .params import params_for, stored_params
from .session import break_lock, check_store, client_for, load_data, run_job

__all__ = ["COMMANDS"]

def cmd_demo(args: argparse.Namespace) -> int:
    from ..datasets import FCE_POOLS
    from ..store import check_new_store
    from .demo import run_demo
    from .session import announce

    break_lock(args)
    check_new_store(args.store, overwrite="demo")  # a demo run is replaced, nothing else
    with client_for(args) as client:
        announce(client)
        run_demo(store=args.store, pools=args.pools or FCE_POOLS, data_dir=args.data_dir,
                 client=client, progress=not args.no_progress, fkr=not args.no_fkr,
                 safairkm=not args.no_safairkm, fce_pools=args.fce_pools)
    return 0


def cmd_fkr(args: argparse.Namespace) -> int:
    from .fkr_job import check_fkr_job, fkr_job, format_fkr_results

    if args.test is not None and args.test_size is not None:
        raise ValueError("give either --test TABLE or --test-size, not both.")
    params = stored_params(args)  # the group-size flags are the estimators'
    check_fkr_job(params, **params_for(args, fkr_job))
    check_store(args, "fkr")

    def load() -> Any:
        data = load_data(args, need_label=True)
        test = None
        if args.test is not None:
            if data.columns is None:
                raise ValueError("--test takes a table with the columns of --input; a named "
                                 "data set is split by --split or --test-size.")
            test = load_data(args, need_label=True, path=args.test, features=data.columns)
        return data, test

    def job(run: Any, client: Any, inputs: Any) -> str:
        data, test = inputs
        summary = fkr_job(data, test=test, run=run, client=client, params=params,
                          **params_for(args, fkr_job, skip=("test",)))
        return (f"The fair kernel model on the test rows ({summary['split']}):\n"
                + format_fkr_results(summary))

    return run_job(args, "fkr", job, load=load)


def cmd_safairkm(args: argparse.Namespace) -> int:
    from ..safairkm import pareto_front
    from .demo import format_safairkm_table
    from .safairkm_job import safairkm_job

    front = params_for(args, pareto_front, skip=("store", "client"))
    check_arguments(pareto_front, front)
    check_arguments(safairkm_job, params_for(args, safairkm_job))
    check_store(args, "safairkm")

    def job(run: Any, client: Any, data: Any) -> str:
        summary = safairkm_job(data, run=run, client=client, params=front,
                               **params_for(args, safairkm_job))
        return (f"Pareto fronts (best possible balance {summary['best_balance']:.3f}; "
                f"hypervolume reference cost {summary['reference'][0]:.4f}):\n"
                + format_safairkm_table(summary["fronts"]))

    return run_job(args, "safairkm", job, in_process=True,
                   load=lambda: load_data(args, need_label=False))


def cmd_fce(args: argparse.Namespace) -> int:
    from ..ensemble import FairClusteringEnsemble, base_clusterings
    from .fce_job import fce_job, format_fce_report

    if args.pool is not None and (args.dataset or args.input):
        raise ValueError("give either --pool or features (--dataset / --input), not both.")
    params = params_for(args, FairClusteringEnsemble)
    FairClusteringEnsemble(**params)._validate_params()
    base = {**params_for(args, base_clusterings),
            "n_clusters": args.base_n_clusters or args.n_clusters}
    if args.base_labels is not None:
        if args.input is None or args.features is not None:
            raise ValueError("--base-labels names columns of the --input table (instead of "
                             "--features): give --input TABLE.")
    elif args.pool is None:  # a pool's base clusterings are read, not computed
        if base["n_clusters"] in (None, "auto"):
            raise ValueError("clustering features needs n_clusters=C (or base_n_clusters=C)"
                             " as a number.")
        check_arguments(base_clusterings, base)
    check_store(args, "fce")
    pool = None
    if args.pool is not None:
        from ..datasets import load_fce_pool

        pool = load_fce_pool(args.pool, args.data_dir)

    def load() -> Any:
        if args.base_labels is None:
            return load_data(args, need_label=False)
        return load_data(args, need_label=False, features=args.base_labels, encode=False)

    def job(run: Any, client: Any, data: Any) -> str:
        s = fce_job(data, run=run, client=client, pool=pool, base_params=base,
                    params=params, given=args.base_labels is not None,
                    **params_for(args, fce_job, skip=("pool", "given")))
        state = "converged" if s["converged"] else "stopped at --max-iter"
        return (f"FCE consensus, c = {s['n_clusters']}: {s['n_iter']} iterations ({state}), "
                f"{s['seconds']:.1f} s\n" + format_fce_report(s))

    return run_job(args, "fce", job, load=None if pool is not None else load)


def cmd_predict(args: argparse.Namespace) -> int:
    from ..models import load, predict_table
    from ..models.scoring import check_prediction
    from ..progress import show_progress
    from .session import announce

    model = load(args.store, **params_for(args, load))
    keep = list(args.keep or ())
    # refused before a cluster starts; the table is read lazily once, here
    table = check_prediction(model, args.input, args.output, keep=keep,
                             overwrite=args.overwrite)
    with client_for(args) as client, show_progress(not args.no_progress):
        announce(client)
        report = predict_table(model, table, args.output, keep=keep,
                               overwrite=args.overwrite)
    print(f"\n{report['rows']:,} rows predicted in {report['partitions']} partitions: "
          f"{', '.join(report['columns'])}")
    for column, n in report["unseen"].items():
        print(f"  {n:,} rows have a level of {column!r} the model never saw: encoded as "
              "all zeros for that column (as if the column were missing)")
    print(f"\nwritten to {report['output']}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from .audit_job import audit_input, audit_job

    break_lock(args)
    data = audit_input(args)  # refused before a cluster starts
    return run_job(args, "audit", lambda run, client, _: audit_job(run, client, data))


def cmd_show(args: argparse.Namespace) -> int:
    from .show import show_run

    return show_run(args.store)


def cmd_plot(args: argparse.Namespace) -> int:
    from .plots import plot_run

    print(f"wrote {plot_run(args.store, args.output, overwrite=args.overwrite)}")
    return 0


def _dataset_rows(root: Any) -> None:
    from ..datasets.sources import DATASET_FILES, SOURCES

    print(f"{'data set':<20}{'files':>6}{'size':>10}  {'status':<16}source")
    for name, files in DATASET_FILES.items():
        have = sum((root / rel).exists() for rel in files)
        status = ("cached" if have == len(files) else "not downloaded" if have == 0
                  else f"{have} of {len(files)} files")
        size = sum(SOURCES[rel].size for rel in files) / 1e6
        print(f"{name:<20}{len(files):>6}{size:>8.1f} MB  {status:<16}"
              f"{SOURCES[files[0]].origin}")


def _verify(root: Any) -> int:
    from ..datasets import is_cache, verify_data

    status = verify_data(root)
    if is_cache(root):  # a cache holds what was needed so far
        status = {k: "not downloaded" if v == "missing" else v for k, v in status.items()}
    bad = {k: v for k, v in status.items() if v not in ("ok", "not downloaded")}
    for name, state in sorted(status.items()):
        print(f"  {state:<8} {name}")
    ok = sum(v == "ok" for v in status.values())
    kinds = "/".join(sorted(set(bad.values())))
    print(f"{ok} of {len(status)} files ok" + (f", {len(bad)} {kinds}" if bad else ""))
    return 1 if bad else 0


def cmd_datasets(args: argparse.Namespace) -> int:
    from ..datasets import data_dir, fetch_data, is_cache

    root = data_dir(args.data_dir)
    kind = ("a cache: missing files are downloaded on first use" if is_cache(root)
            else "kept by hand, with SHA256SUMS: used as it is")
    print(f"data directory: {root} ({kind})")
    for name in args.fetch or ():
        for path in fetch_data(name, root):
            print(f"  ok       {path.relative_to(root)}")
    _dataset_rows(root)
    return _verify(root) if args.verify else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo, "fkr": cmd_fkr, "safairkm": cmd_safairkm, "fce": cmd_fce,
    "predict": cmd_predict, "audit": cmd_audit, "show": cmd_show, "plot": cmd_plot,
    "datasets": cmd_datasets,
}

