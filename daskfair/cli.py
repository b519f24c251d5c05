"""The ``daskfair`` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from . import __version__

__all__ = ["build_parser", "main"]

_DEMO_HELP = """\
The main job, on a Dask cluster. Part 1 audits the FCE authors' six base-clustering pools:
the seven FCE metrics (ACC, NMI, Bal, MNCE, CCE, NE, f_CCE) of all 100 k-means base
clusterings per pool, each a task, reduced to the paper's "KM" rows. Part 2 finds the fair
FCE consensus of the HAR and MNIST-USPS pools against their KM rows. Part 3 fits FKR-F²E and
its baselines on the FKR-F²E authors' Credit Default split (one task per method). Tables are
printed and written to a zarr store.

example:
  daskfair demo                              # LocalCluster sized to this machine
  daskfair demo --workers 2 --store km.zarr
  daskfair demo --scheduler tcp://10.0.0.5:8786 --pools har mnist_usps
"""

_DATASETS_HELP = """\
List the real data sets daskfair can load and verify their files against SHA256SUMS.

example:
  daskfair datasets
  daskfair datasets --data-dir /data/daskfair --verify
"""


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where it runs")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="join this Dask scheduler (tcp://host:port or a scheduler file); "
                        "default: DASK_SCHEDULER_ADDRESS, else a LocalCluster")
    g.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of the LocalCluster (default: one per core)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument("--data-dir", metavar="PATH",
                   help="data directory (default: DASKFAIR_DATA, else ../shared/data)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render ``--help`` in the docs)."""
    parser = argparse.ArgumentParser(
        prog="daskfair",
        description="Fair machine learning at any scale with Dask: FKR-F2E, SAfairKM, FCE.",
    )
    parser.add_argument("--version", action="version", version=f"daskfair {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser("demo", help="audit the FCE base-clustering pools (the main job)",
                          description=_DEMO_HELP,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_cluster_options(demo)
    demo.add_argument("--store", default="daskfair-demo.zarr", metavar="PATH",
                      help="zarr store for the run (replaced if present; default %(default)s)")
    demo.add_argument("--pools", nargs="+", metavar="POOL",
                      help="pools to audit (default: all six)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.add_argument("--fce-pools", nargs="*", metavar="POOL", default=["har", "mnist_usps"],
                      help="pools for the FCE consensus part (default: har mnist_usps; "
                           "none to skip)")
    demo.add_argument("--no-fkr", action="store_true", help="skip the FKR-F²E part")
    demo.add_argument("--no-safairkm", action="store_true", help="skip the SAfairKM part")

    ds = sub.add_parser("datasets", help="list and verify the real data sets",
                        description=_DATASETS_HELP,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ds.add_argument("--data-dir", metavar="PATH",
                    help="data directory (default: DASKFAIR_DATA, else ../shared/data)")
    ds.add_argument("--verify", action="store_true",
                    help="check every file's SHA-256 against SHA256SUMS")
    return parser


def _print_dashboard(client) -> None:
    from .deploy import dashboard_link

    link = dashboard_link(client)
    if link:
        print(f"Dask dashboard: {link}", flush=True)
    else:
        print("Dask dashboard: not available (pip install 'daskfair[dashboard]' for it)",
              flush=True)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .datasets import FCE_POOLS
    from .demo import run_demo
    from .deploy import client_context

    with client_context(args.scheduler, n_workers=args.workers) as client:
        print(f"Dask cluster: {len(client.scheduler_info()['workers'])} workers "
              f"({client.scheduler.address})", flush=True)
        _print_dashboard(client)
        run_demo(store=args.store, pools=args.pools or FCE_POOLS, data_dir=args.data_dir,
                 client=client, progress=not args.no_progress, fkr=not args.no_fkr,
                 safairkm=not args.no_safairkm, fce_pools=args.fce_pools)
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from .datasets import DATASETS, FCE_POOLS, data_dir, verify_data

    root = data_dir(args.data_dir)
    print(f"data directory: {root}")
    print("data sets:  " + ", ".join(DATASETS))
    print("FCE pools:  " + ", ".join(FCE_POOLS))
    if not args.verify:
        return 0
    status = verify_data(root)
    bad = {k: v for k, v in status.items() if v != "ok"}
    for name, state in sorted(status.items()):
        print(f"  {state:<8} {name}")
    print(f"{len(status) - len(bad)} of {len(status)} files ok")
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``daskfair`` console script."""
    args = build_parser().parse_args(argv)
    # Configure daskfair's own logger only: a root handler would also print distributed's
    # INFO messages (its loggers are set to INFO by dask's configuration).
    log = logging.getLogger("daskfair")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO if args.verbose else logging.WARNING)
    commands = {"demo": _cmd_demo, "datasets": _cmd_datasets}
    try:
        return commands[args.command](args)
    except (ValueError, TypeError, FileNotFoundError, FileExistsError, PermissionError,
            ConnectionError) as exc:
        # Input and environment errors are the user's to fix: one clear line, no traceback.
        print(f"daskfair {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
