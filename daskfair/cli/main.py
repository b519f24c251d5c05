"""The ``daskfair`` command line: one sub-command per job, each writing a zarr run."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import __version__
from ..datasets.errors import DataUnavailableError
from ..runtime.jobqueue import JOBQUEUE_SYSTEMS

__all__ = ["build_parser", "main"]

_DEMO_HELP = """\
The main job, on a Dask cluster. Part 1 audits the FCE authors' six base-clustering pools:
the seven FCE metrics (ACC, NMI, Bal, MNCE, CCE, NE, f_CCE) of all 100 k-means base
clusterings per pool, each a task, reduced to the paper's "KM" rows. Part 2 finds the fair
FCE consensus of the HAR and MNIST-USPS pools against their KM rows. Part 3 fits FKR-F²E and
its baselines on the FKR-F²E authors' Credit Default split (one task per method). Part 4
builds the SAfairKM front of Adult against VfairKM. Tables are printed and written to a zarr
store.

example:
  daskfair demo                              # LocalCluster sized to this machine
  daskfair demo --workers 2 --store km.zarr
  daskfair demo --scheduler tcp://10.0.0.5:8786 --pools har mnist_usps
"""

_DATASETS_HELP = """\
List the real data sets daskfair can load, with where their files are and where they come
from; download them (--fetch) or verify them (--verify).

The data directory is --data-dir, else DASKFAIR_DATA, else ../shared/data of a checkout,
else your cache folder. A folder holding SHA256SUMS is used as it is; any other is a cache:
a missing file is downloaded from its publisher on first use (or now, with --fetch) and kept
only when its SHA-256 matches. DASKFAIR_DATA_URL replaces every publisher by one mirror.

example:
  daskfair datasets
  daskfair datasets --fetch all
  daskfair datasets --fetch adult har
  daskfair datasets --data-dir /data/daskfair --verify
"""

_FKR_HELP = """\
Fit the most accurate fair kernel classifier (or regressor) whose validation disparity stays
within --disparity-bound, chosen by cross-validation over every candidate of the fairness
path (FairKernelClassifierCV: two passes over the training rows whatever the number of
candidates), next to its baselines (FKRR, kernel ridge, the constant predictor); report
statistical disparity (SD) and error on the test rows. The candidates' validation frontier
is stored (`daskfair plot`). --fair-feature-counts instead fits the paper's FKR-F²E for each k.

example:
  daskfair fkr --dataset adult --disparity-bound 0.01 --store adult.zarr
  daskfair fkr --input loans.parquet --label default --sensitive sex \\
      --disparity-bound 0.02 --gammas 0.01 0.03 0.1 --store loans.zarr
  daskfair fkr --dataset ffe_credit --split 0 --kernel polynomial --degree 4 --coef0 0.1 \\
      --fair-feature-counts 5 20 60 --store credit.zarr
"""

_SAFAIRKM_HELP = """\
Build the SAfairKM cost/balance Pareto front (the paper's Algorithm 3): a list of label
vectors spread over the workers; every iteration each member runs Algorithm 2 for every pair
(n_a k-means updates, n_b swaps) and dominated points are dropped. VfairKM's μ sweep is the
baseline. The run checkpoints every --checkpoint-every iterations; an interrupted run
continues with the same command plus --resume and ends with the same front.

example:
  daskfair safairkm --dataset safairkm_adult --rows 5000 --store front.zarr
  daskfair safairkm --dataset safairkm_adult --rows 5000 --store front.zarr --resume
"""

_FCE_HELP = """\
Fair clustering ensemble: base clusterings (each a task) and their fair, equal-capacity
consensus (alternating SVD steps and a fair assignment sweep). Give features (--dataset or
--input) to cluster them, or --pool for one of the FCE authors' base-clustering pools. The
consensus checkpoints after every iteration; --resume continues an interrupted run.

example:
  daskfair fce --pool har --n-runs 10 --n-clusters 6 --store har.zarr
  daskfair fce --dataset adult --n-clusters 2 --n-runs 20 --methods kmeans spectral --store a.zarr
"""

_SHOW_HELP = """\
Summarise a stored run: kind, status, parameters, results and arrays. A run that did not
finish is shown as INCOMPLETE, with its last checkpoint, and the exit status is 1.

example:
  daskfair show front.zarr
"""

_PLOT_HELP = """\
Draw a finished run as a PNG: the Pareto front with the VfairKM baseline (safairkm, demo),
the SD/error trade-off (fkr) or the FCE metrics against the base clusterings (fce).

example:
  daskfair plot front.zarr                  # writes front.png
  daskfair plot credit.zarr -o tradeoff.png
"""

_TERMINATED = "terminated (SIGTERM)"


def _on_sigterm(signum: int, frame: Any) -> None:
    # A batch system's walltime or scancel sends SIGTERM before SIGKILL: unwinding as for
    # Ctrl-C gives the store's lease back, so the job resumes anywhere without --break-lock.
    raise KeyboardInterrupt(_TERMINATED)


# Options that say where and how a job runs, not what it computes: they stay out of the
# stored parameters, so an interrupted run may be resumed on another cluster.
_NOT_PARAMS = {"command", "verbose", "scheduler", "workers", "jobqueue", "jobs",
               "jobqueue_config", "jobqueue_wait", "data_dir", "store", "overwrite", "resume",
               "break_lock", "no_progress", "tls_ca_file", "tls_cert", "tls_key", "walltime",
               "adapt", "job_script_prologue", "job_directives_skip"}
# options added after runs were stored: at their defaults they are left out of the stored
# parameters, so a run stored before them still resumes
_NEW_OPTION_DEFAULTS = {"sync_every": 1, "init": "matched", "min_group_size": 1,
                        "small_groups": "raise"}



def _renamed(g: Any, new: str, old: str, **kwargs: Any) -> None:
    g.add_argument(new, dest=kwargs.pop("dest", old[2:].replace("-", "_")), **kwargs)


def _add_cluster_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where it runs")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="join this Dask scheduler (tcp://host:port or a scheduler file); "
                        "default: DASK_SCHEDULER_ADDRESS, else a LocalCluster (safairkm: "
                        "this process)")
    g.add_argument("--workers", type=int, metavar="N",
                   help="worker processes of the LocalCluster (default: one per core)")
    g.add_argument("--jobqueue", choices=sorted(JOBQUEUE_SYSTEMS),
                   help="start a SLURM or PBS cluster through dask-jobqueue instead")
    g.add_argument("--tls-ca-file", metavar="PATH",
                   help="with --scheduler: the CA certificate of a TLS scheduler (default: "
                        "dask's distributed.comm.tls configuration)")
    g.add_argument("--tls-cert", metavar="PATH", help="with --scheduler: this client's "
                   "TLS certificate")
    g.add_argument("--tls-key", metavar="PATH", help="with --scheduler: this client's TLS "
                   "private key (if not inside --tls-cert)")
    g.add_argument("--jobs", type=int, metavar="N",
                   help="batch jobs to keep running with --jobqueue; one that ends is "
                        "replaced (default 1)")
    g.add_argument("--adapt", type=int, nargs=2, metavar=("MIN", "MAX"),
                   help="with --jobqueue: scale between MIN and MAX jobs with the work, "
                        "instead of --jobs")
    g.add_argument("--walltime", metavar="HH:MM:SS",
                   help="with --jobqueue: each job's time limit (default: the configuration's);"
                        " workers retire before it and new jobs take over")
    g.add_argument("--job-script-prologue", action="append", metavar="LINE",
                   help="with --jobqueue: a shell line run in each job before its workers "
                        "(module load ..., source venv/bin/activate); repeatable")
    g.add_argument("--job-directives-skip", action="append", metavar="TEXT",
                   help="with --jobqueue: drop generated #SBATCH/#PBS lines containing TEXT; "
                        "repeatable")
    g.add_argument("--jobqueue-config", metavar="PATH",
                   default=os.environ.get("DASKFAIR_JOBQUEUE_CONFIG"),
                   help="dask-jobqueue YAML such as cluster/jobqueue.yaml (default: "
                        "DASKFAIR_JOBQUEUE_CONFIG, else dask's own configuration)")
    g.add_argument("--jobqueue-wait", type=float, default=600.0, metavar="SECONDS",
                   help="how long to wait for the first worker of the jobs (default 600)")
    _renamed(g, "--random-state", "--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument("--data-dir", metavar="PATH",
                   help="data directory (default: DASKFAIR_DATA, else ../shared/data, else "
                        "your cache folder; missing files are downloaded into a cache)")


def _add_run_options(p: argparse.ArgumentParser, kind: str, *, resume: bool) -> None:
    g = p.add_argument_group("the run")
    g.add_argument("--store", default=f"daskfair-{kind}.zarr", metavar="PATH",
                   help="zarr store of the run (default %(default)s)")
    g.add_argument("--overwrite", action="store_true",
                   help="replace the daskfair run in --store (anything else there is kept; a "
                        "path that is not a daskfair run is never replaced)")
    _add_break_lock(g)
    if resume:
        g.add_argument("--resume", action="store_true",
                       help="continue the interrupted run in --store (same options)")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")


def _add_break_lock(g: Any) -> None:
    g.add_argument("--break-lock", action="store_true",
                   help="remove the lock a run that is no longer running left in --store "
                        "(a live run's lock is never broken)")


def _add_input_options(p: argparse.ArgumentParser, *, pool: bool = False) -> None:
    g = p.add_argument_group("input: one of --dataset, --input" + (", --pool" if pool else ""))
    g.add_argument("--dataset", metavar="NAME",
                   help="a named real data set (`daskfair datasets` lists them)")
    g.add_argument("--input", metavar="PATH",
                   help="a table: CSV file or glob (optionally .gz), Parquet file, directory or "
                        "glob; or a 2-D zarr array")
    if pool:
        g.add_argument("--pool", metavar="POOL",
                       help="an FCE base-clustering pool (ds, har, mnist_usps, ...)")
    g.add_argument("--label", metavar="COLUMN", help="label column (an index for zarr)")
    g.add_argument("--sensitive", nargs="+", metavar="COLUMN",
                   help="sensitive-group column (an index for zarr); several columns of a "
                        "table: every combination of their values is a group")
    g.add_argument("--features", nargs="+", metavar="COLUMN",
                   help="feature columns (default: all others)")
    g.add_argument("--no-encode", dest="encode", action="store_false",
                   help="refuse non-numeric feature columns instead of one-hot encoding them")
    g.add_argument("--max-levels", type=int, default=1000, metavar="N",
                   help="refuse a text column with more distinct values (an ID, free text; "
                        "default %(default)s)")
    g.add_argument("--numeric-missing", default="error", choices=["error", "indicator"],
                   help="a missing number: an error (default), or 0 plus a column=<missing> "
                        "indicator column")
    g.add_argument("--min-group-size", type=int, default=1, metavar="N",
                   help="the fewest rows a group may have (default 1: every group is kept)")
    g.add_argument("--small-groups", choices=("raise", "merge"), default="raise",
                   help="smaller groups: an error (raise, the default), or merged into one "
                        "group 'other' for every model and report (merge)")
    g.add_argument("--sensitive-attribute", metavar="NAME",
                   help="which attribute of a named data set is sensitive, where it offers a "
                        "choice")
    g.add_argument("--chunk-rows", type=int, default=50_000, metavar="N",
                   help="rows per block on the cluster (default %(default)s)")


def _pair(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a pair is n_a,n_b (e.g. 20,4), got {text!r}") from None
    return a, b


def _fairness(text: str) -> float | str:
    return text if text == "auto" else float(text)


def _sub(sub: Any, name: str, help_: str, description: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_, description=description,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render ``--help`` in the docs)."""
    parser = argparse.ArgumentParser(
        prog="daskfair",
        description="Fair machine learning at any scale with Dask: FKR-F2E, SAfairKM, FCE.",
    )
    parser.add_argument("--version", action="version", version=f"daskfair {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for add in (_add_demo, _add_fkr, _add_safairkm, _add_fce, _add_store_and_data):
        add(sub)
    return parser


def _add_demo(sub: Any) -> None:
    """The ``demo`` command."""
    demo = _sub(sub, "demo", "audit the FCE pools, FCE, FKR-F²E and SAfairKM (the main job)",
                _DEMO_HELP)
    _add_cluster_options(demo)
    demo.add_argument("--store", default="daskfair-demo.zarr", metavar="PATH",
                      help="zarr store for the run (a demo run there is replaced; default "
                           "%(default)s)")
    _add_break_lock(demo)
    demo.add_argument("--pools", nargs="+", metavar="POOL",
                      help="pools to audit (default: all six)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.add_argument("--fce-pools", nargs="*", metavar="POOL", default=["har", "mnist_usps"],
                      help="pools for the FCE consensus part (default: har mnist_usps; "
                           "none to skip)")
    demo.add_argument("--no-fkr", action="store_true", help="skip the FKR-F²E part")
    demo.add_argument("--no-safairkm", action="store_true", help="skip the SAfairKM part")


def _confidence(text: str) -> float | None:
    """--disparity-confidence: a number in [0.5, 1) or 'none'."""
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number in [0.5, 1) or 'none', got {text!r}")
    return value


def _add_fkr(sub: Any) -> None:
    """The ``fkr`` command: FKR-F²E and its baselines."""
    fkr = _sub(sub, "fkr", "FKR-F²E and its baselines: SD and error", _FKR_HELP)
    _add_input_options(fkr)
    g = fkr.add_argument_group("fairness and model selection")
    g.add_argument("--disparity-bound", type=float, default=0.01, metavar="B",
                   help="largest disparity accepted (default 0.01): the SD of "
                        "predictions, or the gap of mean predictions for regression; "
                        "compared with the validation disparity plus a margin for its noise")
    g.add_argument("--disparity-confidence", type=_confidence, default=0.9, metavar="C",
                   help="confidence that the disparity on new rows (as many as one fold) "
                        "stays within the bound: sets the margin (default 0.9; 'none': no "
                        "margin, the validation disparity alone)")
    _renamed(g, "--constraints", "--constraint", default="demographic_parity",
             choices=["demographic_parity", "equalized_odds"],
             help="what the bound limits (classification; default demographic parity)")
    _renamed(g, "--cv", "--folds", type=int, default=5, help="cross-validation folds (default 5)")
    g = fkr.add_argument_group("kernel")
    g.add_argument("--kernel", default="rbf",
                   choices=["linear", "polynomial", "sigmoid", "rbf"],
                   help="kernel (default rbf; the paper used polynomial on Credit and Crime)")
    _renamed(g, "--gammas", "--gamma", type=float, nargs="+", metavar="G",
             help="kernel coefficient (default 1/n_features); several values are "
                  "searched by the cross-validation (two passes each)")
    g.add_argument("--degree", type=int, default=3, help="polynomial degree (default 3)")
    g.add_argument("--coef0", type=float, default=1.0, help="kernel constant c (default 1)")
    _renamed(g, "--n-landmarks", "--landmarks", type=int, default=1000, metavar="M",
             help="Nyström landmarks; a training set this small is fitted exactly")
    g = fkr.add_argument_group("the paper's FKR-F²E (instead of the selection)")
    _renamed(g, "--fair-feature-counts", "--components", type=int, nargs="+", metavar="K",
             help="fit FKR-F²E with k fair features for each K (the trade-off)")
    g.add_argument("--objective", default="mean_discrepancy",
                   choices=["mean_discrepancy", "paper"],
                   help="eigenproblem (default: the literal mean discrepancy; 'paper' is the "
                        "paper's eq. 17/18, the constant predictor on the paper's data)")
    _renamed(g, "--fairness-weight", "--fairness", type=float,
             help="scale-free trade-off γ of --objective mean_discrepancy "
                  "(default: the exact constraint)")
    _renamed(g, "--relative-alpha", "--alpha", type=float, default=1e-4,
             help="relative ridge penalty (default 1e-4; also the baselines')")
    _renamed(g, "--fkrr-fairness-weight", "--mu", type=float, default=1.0,
             help="FKRR's relative fairness penalty (default 1)")
    g = fkr.add_argument_group("data")
    g.add_argument("--task", default="auto", choices=["auto", "classification", "regression"],
                   help="default: classification for a binary label")
    g.add_argument("--split", type=int, default=0,
                   help="published split of the FKR-F²E data sets (default 0)")
    g.add_argument("--test-size", type=float, default=0.25,
                   help="test fraction of a seeded stratified split (other data; default "
                        "0.25)")
    _add_cluster_options(fkr)
    _add_run_options(fkr, "fkr", resume=False)


def _add_safairkm(sub: Any) -> None:
    """The ``safairkm`` command: the Pareto front and VfairKM's."""
    sa = _sub(sub, "safairkm", "the SAfairKM cost/balance Pareto front", _SAFAIRKM_HELP)
    _add_input_options(sa)
    g = sa.add_argument_group("SAfairKM")
    _renamed(g, "--n-clusters", "--clusters", type=int, default=10, metavar="K",
             help="K (default 10)")
    _renamed(g, "--n-init", "--starts", type=int, default=30,
             help="starting label vectors (default 30)")
    _renamed(g, "--max-iter", "--iterations", type=int, default=500,
             help="iterations (default 500)")
    g.add_argument("--budget", type=int, default=1500,
                   help="stop when the front holds this many points (default 1500)")
    _renamed(g, "--update-pairs", "--pairs", type=_pair, nargs="+", metavar="NA,NB",
             help="(k-means updates, swaps) per iteration (default: the authors' code's "
                  "25,0 20,4 15,3 5,2)")
    g.add_argument("--target", default="local", choices=["local", "global"],
                   help="swap target: nearest center (eq. 5) or richest cluster (eq. 4)")
    g.add_argument("--dominance", default="weak", choices=["weak", "strict"],
                   help="filter after every iteration: weak (default; drops ties and "
                        "duplicates) or strict (the paper's Algorithm 3)")
    g.add_argument("--sync-every", type=int, default=1, metavar="S",
                   help="iterations per round trip to the cluster (default 1: the paper's "
                        "Algorithm 3 exactly; larger S: batches filter their own lists in "
                        "between, fewer round trips)")
    g.add_argument("--rows", type=int, metavar="N",
                   help="seeded subsample of N rows (the paper used 5000; default all)")
    g.add_argument("--scale", default="safairkm", choices=["safairkm", "standard", "none"],
                   help="preprocessing (default: the paper's z-scores and unit-length rows)")
    _renamed(g, "--vfairkm-fairness-weights", "--vfairkm", type=float, nargs="*",
             default=[0.0, 200.0, 400.0, 800.0],
             metavar="MU", help="μ values of the VfairKM baseline (none to skip)")
    g.add_argument("--checkpoint-every", type=int, default=10, metavar="T",
                   help="checkpoint every T iterations (default 10)")
    _add_cluster_options(sa)
    _add_run_options(sa, "safairkm", resume=True)


def _add_fce(sub: Any) -> None:
    """The ``fce`` command: base clusterings and the consensus."""
    fce = _sub(sub, "fce", "fair clustering ensemble: base clusterings and consensus",
               _FCE_HELP)
    _add_input_options(fce, pool=True)
    g = fce.add_argument_group("FCE")
    _renamed(g, "--n-clusters", "--clusters", type=int, metavar="C",
             help="consensus clusters c (default: chosen by silhouette)")
    _renamed(g, "--n-runs", "--runs", type=int, default=20,
             help="base clusterings m (of a pool: the first m; default 20)")
    g.add_argument("--methods", nargs="+", default=["kmeans"],
                   choices=["kmeans", "minibatch", "spectral", "agglomerative"],
                   help="base clustering methods, used in turn (default kmeans; spectral is "
                        "kernel PCA + k-means on a Nyström rbf embedding)")
    _renamed(g, "--base-n-clusters", "--base-clusters", type=int, metavar="C",
             help="clusters per base clustering (default: --n-clusters)")
    _renamed(g, "--fairness-weight", "--fairness", type=_fairness, default="auto",
             help="λ2: a number or auto (default auto)")
    _renamed(g, "--consensus-weight", "--lambda1", type=float, default=0.001,
             help="λ1 (default 0.001)")
    g.add_argument("--max-iter", type=int, default=50, help="iterations (default 50)")
    g.add_argument("--tol", type=float, default=1e-4,
                   help="stop at this relative change of the objective (default 1e-4)")
    g.add_argument("--alignment", default="rotation", choices=["rotation", "hungarian"],
                   help="R(i) as rotations (FCE) or permutations (FCE-a)")
    g.add_argument("--init", default="matched", choices=["matched", "paper"],
                   help="start from a base clustering with matched R(i) (default), or the "
                        "paper's R = R(i) = I, α = 1/m, H from ΣY(i)")
    _add_cluster_options(fce)
    _add_run_options(fce, "fce", resume=True)


def _add_store_and_data(sub: Any) -> None:
    """The ``show``, ``plot`` and ``datasets`` commands."""
    show = _sub(sub, "show", "summary of a stored run", _SHOW_HELP)
    show.add_argument("store", metavar="STORE", help="path of the run's zarr store")

    plot = _sub(sub, "plot", "PNG of a front, a trade-off curve or FCE metrics", _PLOT_HELP)
    plot.add_argument("store", metavar="STORE", help="path of a finished run's zarr store")
    plot.add_argument("-o", "--output", metavar="PNG",
                      help="where to write the figure (default: STORE with .png)")

    ds = _sub(sub, "datasets", "list and verify the real data sets", _DATASETS_HELP)
    ds.add_argument("--data-dir", metavar="PATH",
                    help="data directory (default: DASKFAIR_DATA, else ../shared/data, else "
                         "your cache folder)")
    ds.add_argument("--fetch", nargs="+", metavar="NAME",
                    help="download these data sets or FCE pools (or all) if missing")
    ds.add_argument("--verify", action="store_true",
                    help="check every file's SHA-256 (SHA256SUMS, or daskfair's registry)")



def _print_dashboard(client: Any) -> None:
    from ..runtime.clients import dashboard_link

    link = dashboard_link(client)
    if link:
        print(f"Dask dashboard: {link}", flush=True)
        address = str(client.scheduler.address)
        if link.startswith("http://127.0.0.1:") and "127.0.0.1" not in address:
            port = link.split(":")[2].split("/")[0]
            print(f"  (on this machine only; from yours: ssh -N -L {port}:127.0.0.1:{port} "
                  f"{socket.gethostname()}, then open {link})", flush=True)
    else:
        print("Dask dashboard: not available (pip install 'daskfair[dashboard]' for it)",
              flush=True)


def _client(args: argparse.Namespace, in_process: bool = False) -> Any:
    """The job's client; ``in_process`` jobs (SAfairKM, whose every task holds all rows) run
    in this process unless a cluster is asked for (--scheduler, --workers, --jobqueue or
    DASK_SCHEDULER_ADDRESS)."""
    import contextlib

    from ..runtime.clients import client_context, scheduler_from_environment, task_client

    cluster = _cluster_kwargs(args)  # the flags are checked whichever way the job runs
    asked = (args.scheduler or args.workers or args.jobqueue
             or scheduler_from_environment())
    if in_process and not asked:
        return contextlib.nullcontext(task_client())
    return client_context(args.scheduler, n_workers=args.workers, **cluster)


def _cluster_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """get_client's arguments for the --jobqueue and TLS flags, checked against each other."""
    from ..runtime.clients import scheduler_from_environment, tls_security

    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if any(tls) and not (args.scheduler or scheduler_from_environment()):
        raise ValueError("--tls-ca-file/--tls-cert/--tls-key are for joining a TLS scheduler "
                         "(--scheduler or DASK_SCHEDULER_ADDRESS; a --jobqueue cluster makes "
                         "its own credentials).")
    batch = {"--adapt": args.adapt, "--walltime": args.walltime,
             "--job-script-prologue": args.job_script_prologue,
             "--job-directives-skip": args.job_directives_skip}
    if args.jobs is not None:
        batch["--jobs"] = args.jobs
    given = [flag for flag, value in batch.items() if value is not None]
    if given and not args.jobqueue:
        raise ValueError(f"{', '.join(given)} only apply with --jobqueue slurm|pbs.")
    options = {"walltime": args.walltime,
               "adapt": tuple(args.adapt) if args.adapt else None,
               "job_script_prologue": args.job_script_prologue,
               "job_directives_skip": args.job_directives_skip}
    jobs = args.jobs if args.jobs is not None or args.adapt else 1
    return {"jobqueue": args.jobqueue, "jobs": jobs, "jobqueue_config": args.jobqueue_config,
            "jobqueue_wait": args.jobqueue_wait, "security": tls_security(*tls),
            "jobqueue_options": {k: v for k, v in options.items() if v is not None}}


def _announce(client: Any) -> None:
    from ..runtime.inprocess import InProcessClient

    if isinstance(client, InProcessClient):
        print(f"running in this process on {client.n_threads} threads (every task holds all "
              "rows; --workers N or --scheduler ADDRESS to use a Dask cluster)", flush=True)
        return
    print(f"Dask cluster: {len(client.scheduler_info()['workers'])} workers "
          f"({client.scheduler.address})", flush=True)
    _print_dashboard(client)


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..datasets import FCE_POOLS
    from ..store import check_new_store
    from .demo import run_demo

    _break_lock(args)
    check_new_store(args.store, overwrite="demo")  # a demo run is replaced, nothing else
    with _client(args) as client:
        _announce(client)
        run_demo(store=args.store, pools=args.pools or FCE_POOLS, data_dir=args.data_dir,
                 client=client, progress=not args.no_progress, fkr=not args.no_fkr,
                 safairkm=not args.no_safairkm, fce_pools=args.fce_pools)
    return 0


def _load(args: argparse.Namespace, need_label: bool) -> Any:
    from .inputs import load_input

    data = load_input(dataset=args.dataset, path=args.input, label=args.label,
                      sensitive=args.sensitive, features=args.features,
                      sensitive_attribute=args.sensitive_attribute, data_dir=args.data_dir,
                      need_label=need_label, encode=args.encode, max_levels=args.max_levels,
                      numeric_missing=args.numeric_missing, chunk_rows=args.chunk_rows,
                      task=getattr(args, "task", None), min_group_size=args.min_group_size,
                      small_groups=args.small_groups)
    d = data.description
    if d.get("source") == "table":
        print(f"read {args.input}: {d['rows']:,} rows in {d['partitions']} partitions, "
              f"{data.X.shape[1]} feature columns", flush=True)
    if d.get("encoded"):
        levels = ", ".join(f"{c} ({n} levels)" for c, n in d["encoded"].items())
        print(textwrap.fill(f"one-hot encoded {levels} (--no-encode to refuse them instead)",
                            width=96, subsequent_indent="  "))
    if d.get("constant"):
        print(f"note: constant feature column(s) {d['constant']} carry no information")
    if d.get("merged_groups"):
        merged = ", ".join(f"{g} ({n:,} rows)" for g, n in d["merged_groups"].items())
        print(textwrap.fill(f"merged the groups of fewer than {args.min_group_size:,} rows "
                            f"into {d['merged_into']!r}: {merged}", width=96,
                            subsequent_indent="  "))
    return data


def _break_lock(args: argparse.Namespace) -> None:
    """``--break-lock``: remove a dead run's lock, saying so (a live one is refused)."""
    from ..store import break_lock

    if not args.break_lock:
        return
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        holder = break_lock(args.store)
    for w in said:
        print(f"daskfair {args.command}: warning: {w.message}", file=sys.stderr)
    if holder is None:
        print(f"daskfair {args.command}: --break-lock: {args.store} has no lock to break",
              file=sys.stderr)


def _params(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_PARAMS
            and not (k in _NEW_OPTION_DEFAULTS and v == _NEW_OPTION_DEFAULTS[k])}


def _check_store(args: argparse.Namespace, kind: str) -> None:
    """Refuse a store the job could not write before the data is read (``--break-lock``
    first): the check that holds is the lease, taken when the run starts."""
    from ..store import check_new_store, resume_run

    _break_lock(args)
    if getattr(args, "resume", False):
        resume_run(args.store, kind=kind, params=_params(args)).close()
    else:
        check_new_store(args.store, overwrite=args.overwrite)


def _run_job(args: argparse.Namespace, kind: str, job: Callable[..., str],
             in_process: bool = False, load: Callable[[], Any] | None = None) -> int:
    """Start the client, ``load()`` the data (a table's pass runs on the cluster), open the
    run, run ``job(run, client, data)`` (returns the text to print), mark the run complete.

    The run is created only once the data are read and checked: an input error leaves no
    store behind.
    """
    from ..progress import show_progress
    from ..store import check_new_store, create_run, resume_run

    params = _params(args)
    resume = getattr(args, "resume", False)
    run = resume_run(args.store, kind=kind, params=params) if resume else None
    if run is None:  # refused before a cluster starts; created once it runs
        check_new_store(args.store, overwrite=args.overwrite)
    try:
        with (_client(args, in_process) as client, show_progress(not args.no_progress),
              warnings.catch_warnings()):
            # In-memory inputs travel inside the graph on purpose (inputs.to_dask: a block
            # lost with a worker is sent again); distributed's size warning says nothing
            # the user can act on here.
            warnings.filterwarnings("ignore", message="Sending large graph")
            _announce(client)
            data = load() if load is not None else None
            if run is None:
                # checked before the cluster started; checked again here, since another
                # run may have finished at this path meanwhile (never replaced unasked)
                run = create_run(args.store, kind=kind, params=params,
                                 overwrite=args.overwrite)
            text = job(run, client, data)
            run.mark_complete()
    except KeyboardInterrupt as exc:
        what = str(exc) or "interrupted"
        if run is None:  # still loading the data: nothing was written
            print(f"\n{what} before the run started: {args.store} is as it was.",
                  file=sys.stderr)
        else:
            print(f"\n{what}: the run in {args.store} is incomplete"
                  + (". Continue it with the same command and --resume."
                     if "resume" in vars(args) else "; run the command again with "
                     "--overwrite."), file=sys.stderr)
        return 143 if str(exc) == _TERMINATED else 130
    finally:
        if run is not None:
            run.close()  # the lease: a run that stopped writes nothing more
    print("\n" + text)
    print(f"\nwritten to {run.path}")
    return 0


def _cmd_fkr(args: argparse.Namespace) -> int:
    from .jobs import fkr_job, format_fkr_results

    _check_store(args, "fkr")

    def job(run: Any, client: Any, data: Any) -> str:
        summary = fkr_job(
            data, run=run, client=client, kernel=args.kernel, degree=args.degree,
            gamma=args.gamma, coef0=args.coef0, disparity_bound=args.disparity_bound,
            disparity_confidence=args.disparity_confidence, constraint=args.constraint,
            folds=args.folds, components=args.components,
            objective=args.objective, fairness=args.fairness, alpha=args.alpha, mu=args.mu,
            n_landmarks=args.landmarks, task=args.task, split=args.split,
            test_size=args.test_size, seed=args.seed, chunk_rows=args.chunk_rows)
        return (f"Fair kernel model and baselines on the test rows ({summary['split']}):\n"
                + format_fkr_results(summary))

    return _run_job(args, "fkr", job, load=lambda: _load(args, need_label=True))


def _cmd_safairkm(args: argparse.Namespace) -> int:
    from .demo import format_safairkm_table
    from .jobs import safairkm_job

    _check_store(args, "safairkm")

    def job(run: Any, client: Any, data: Any) -> str:
        summary = safairkm_job(
            data, run=run, client=client, n_clusters=args.clusters, n_starts=args.starts,
            n_iter=args.iterations, budget=args.budget, pairs=args.pairs, target=args.target,
            dominance=args.dominance, sync_every=args.sync_every, rows=args.rows,
            scale=args.scale, vfairkm_mus=args.vfairkm,
            checkpoint_every=args.checkpoint_every, resume=args.resume, seed=args.seed)
        return (f"Pareto fronts (best possible balance {summary['best_balance']:.3f}; "
                f"hypervolume reference cost {summary['reference'][0]:.4f}):\n"
                + format_safairkm_table(summary["fronts"]))

    return _run_job(args, "safairkm", job, in_process=True,
                    load=lambda: _load(args, need_label=False))


def _cmd_fce(args: argparse.Namespace) -> int:
    from .jobs import fce_job, format_fce_report

    if args.pool is not None and (args.dataset or args.input):
        raise ValueError("give either --pool or features (--dataset / --input), not both.")
    if args.pool is not None and args.min_group_size != 1:
        raise ValueError("--min-group-size applies to --dataset and --input; a pool's groups "
                         "are used as they are (FairClusteringEnsemble(min_group_size=...) "
                         "merges them in Python).")
    _check_store(args, "fce")
    pool = None
    if args.pool is not None:
        from ..datasets import load_fce_pool

        pool = load_fce_pool(args.pool, args.data_dir)

    def job(run: Any, client: Any, data: Any) -> str:
        s = fce_job(
            data, pool=pool, run=run, client=client, n_clusters=args.clusters,
            n_runs=args.runs, methods=args.methods, base_clusters=args.base_clusters,
            fairness=args.fairness, lambda1=args.lambda1, max_iter=args.max_iter,
            tol=args.tol, alignment=args.alignment, init=args.init,
            chunk_rows=args.chunk_rows,
            resume=args.resume, seed=args.seed)
        state = "converged" if s["converged"] else "stopped at --max-iter"
        return (f"FCE consensus, c = {s['n_clusters']}: {s['n_iter']} iterations ({state}), "
                f"{s['seconds']:.1f} s\n" + format_fce_report(s))

    return _run_job(args, "fce", job, load=None if pool is not None
                    else lambda: _load(args, need_label=False))


def _brief(value: Any, width: int = 96) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def _unfinished_advice(run: Any) -> str:
    """What to do with a run that did not finish, for its kind."""
    from ..store.run import RESUMABLE_KINDS

    if run.kind == "demo":  # the demo replaces its own run, and has no --overwrite
        return "run daskfair demo again (it replaces its own run)."
    if run.kind in RESUMABLE_KINDS and run.status == "running":
        return "continue it with the same command and --resume, or replace it with --overwrite."
    return "run the command again with --overwrite."


def _cmd_show(args: argparse.Namespace) -> int:

    from ..store import CorruptStoreError, open_run
    from ..store.lease import lease_status

    run = open_run(args.store, allow_incomplete=True, verify=None)
    info = run.info
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
    if run.is_complete and info.get("format") == 1:
        print(f"status:    complete (started {info.get('created')}, finished "
              f"{info.get('completed')}; store format 1: no checksums to verify it)")
    elif run.is_complete:
        print(f"status:    complete (started {info.get('created')}, finished "
              f"{info.get('completed')})")
    else:
        ckpt = run.checkpoint
        where = (f"last checkpoint at iteration {ckpt['iteration']}" if ckpt
                 else "no checkpoint yet")
        print(f"status:    INCOMPLETE: the run did not finish (started {info.get('created')}; "
              f"{where}).\n           Not a result: " + _unfinished_advice(run))
    versions = info.get("versions", {})
    print("software:  " + ", ".join(f"{k} {versions[k]}" for k in
                                     ("daskfair", "dask", "distributed", "zarr", "numpy")
                                     if k in versions))
    print("parameters:")
    for key, value in run.params.items():
        if value is not None:
            print(f"  {key:<22} {_brief(value)}")
    results = {k: v for k, v in run.attrs.items()
               if k not in {"daskfair", "params", "checkpoint", "history"}}
    if results:
        print("results:")
        for key, value in results.items():
            if isinstance(value, dict):  # tables: one line per entry
                print(f"  {key}:")
                for sub, v in value.items():
                    print(f"    {sub:<20} {_brief(v, 94)}")
            else:
                print(f"  {key:<22} {_brief(value)}")
    arrays = run.arrays()
    if arrays:
        print("arrays:")
        for name, a in sorted(arrays.items()):
            print(f"  {name:<22} {a.shape} {a.dtype}")
    return 0 if run.is_complete else 1


def _cmd_plot(args: argparse.Namespace) -> int:
    from .plots import plot_run

    print(f"wrote {plot_run(args.store, args.output)}")
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from ..datasets import data_dir, fetch_data, is_cache, verify_data
    from ..datasets.sources import DATASET_FILES, SOURCES

    root = data_dir(args.data_dir)
    kind = ("a cache: missing files are downloaded on first use" if is_cache(root)
            else "kept by hand, with SHA256SUMS: used as it is")
    print(f"data directory: {root} ({kind})")
    for name in args.fetch or ():
        for path in fetch_data(name, root):
            print(f"  ok       {path.relative_to(root)}")
    print(f"{'data set':<20}{'files':>6}{'size':>10}  {'status':<16}source")
    for name, files in DATASET_FILES.items():
        have = sum((root / rel).exists() for rel in files)
        status = ("cached" if have == len(files) else "not downloaded" if have == 0
                  else f"{have} of {len(files)} files")
        size = sum(SOURCES[rel].size for rel in files) / 1e6
        print(f"{name:<20}{len(files):>6}{size:>8.1f} MB  {status:<16}"
              f"{SOURCES[files[0]].origin}")
    if not args.verify:
        return 0
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


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": _cmd_demo, "fkr": _cmd_fkr, "safairkm": _cmd_safairkm, "fce": _cmd_fce,
    "show": _cmd_show, "plot": _cmd_plot, "datasets": _cmd_datasets,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``daskfair`` console script."""
    args = build_parser().parse_args(argv)
    if len(getattr(args, "sensitive", None) or ()) == 1:
        # one column is recorded as before, so that runs stored by earlier versions resume
        args.sensitive = args.sensitive[0]
    # Configure daskfair's own logger only: a root handler would also print distributed's
    # INFO messages (its loggers are set to INFO by dask's configuration).
    log = logging.getLogger("daskfair")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
    log.setLevel(logging.INFO if args.verbose else logging.WARNING)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        return _COMMANDS[args.command](args)
    except (ValueError, TypeError, FileNotFoundError, FileExistsError, PermissionError,
            ConnectionError, ImportError, DataUnavailableError) as exc:
        # Input and environment errors are the user's to fix: one clear line, no traceback.
        print(f"daskfair {args.command}: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)

