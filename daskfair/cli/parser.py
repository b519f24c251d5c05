"""The ``daskfair`` argument parser: a flag's ``dest`` is the library parameter it sets, or a
command-line-only option of docs/vocabulary.md."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .. import __version__
from ..runtime.jobqueue import JOBQUEUE_SYSTEMS
from ..safairkm import DEFAULT_PAIRS

__all__ = ["build_parser", "subparser"]

_DEMO_HELP = """\
The main job, on a Dask cluster: (1) the seven FCE metrics of the FCE authors' 100 k-means
base clusterings of six pools, each a task (the paper's "KM" rows); (2) the fair FCE
consensus of HAR and MNIST-USPS; (3) FKR-F²E and its baselines on the FKR-F²E authors'
Credit Default split; (4) the SAfairKM front of Adult against VfairKM. Tables are printed and
written to a zarr store.

example:
  daskfair demo                              # LocalCluster sized to this machine
  daskfair demo --workers 2 --store km.zarr
  daskfair demo --scheduler tcp://10.0.0.5:8786 --pools har mnist_usps
"""

_DATASETS_HELP = """\
List the real data sets, where their files are and where they come from; download them
(--fetch) or verify them (--verify). The data directory is --data-dir, else DASKFAIR_DATA,
else ../shared/data of a checkout, else your cache folder. A folder holding SHA256SUMS is used
as it is; into any other a missing file is downloaded from its publisher (DASKFAIR_DATA_URL:
one mirror for all) and kept only when its SHA-256 matches.

example:
  daskfair datasets --fetch adult har
  daskfair datasets --data-dir /data/daskfair --verify
"""

_FKR_HELP = """\
The most accurate fair kernel classifier (or regressor) whose validation disparity stays
within --disparity-bound, chosen by cross-validation over every candidate
(FairKernelClassifierCV: two passes over the training rows), fitted as the pipeline
daskfair.load returns (a table's TableEncoder, ColumnScaler, the model) and scored on the test
rows: your own --test table, a published --split, or train_test_split(--test-size). The test
disparity is printed with its 95 % interval. --baselines adds the same search without a bound
and the constant predictor; --n-fair-features fits the paper's FKR-F²E for each k instead.

example:
  daskfair fkr --input train.csv --test test.csv --label income --sensitive sex \\
      --store adult.zarr
  daskfair fkr --input loans.parquet --label default --sensitive sex \\
      --disparity-bound 0.02 --gammas 0.01 0.03 0.1 --baselines --store loans.zarr
  daskfair fkr --dataset ffe_credit --split 0 --kernel polynomial --degree 4 --coef0 0.1 \\
      --n-fair-features 5 20 60 --store credit.zarr
"""

_SAFAIRKM_HELP = """\
The SAfairKM cost/balance Pareto front (the paper's Algorithm 3), its list of label vectors
spread over the workers, against VfairKM's μ sweep. The run checkpoints every
--checkpoint-every iterations; the same command with --resume continues an interrupted run
to the same front.

example:
  daskfair safairkm --dataset safairkm_adult --rows 5000 --store front.zarr
  daskfair safairkm --dataset safairkm_adult --rows 5000 --store front.zarr --resume
"""

_FCE_HELP = """\
Fair clustering ensemble: base clusterings (each a task) of features (--dataset, --input),
your own clusterings (--input TABLE --base-labels COLUMN ...) or one of the FCE authors'
pools (--pool), and their fair, equal-capacity consensus, checkpointed after every
iteration (--resume continues it).

example:
  daskfair fce --pool har --n-runs 10 --n-clusters 6 --store har.zarr
  daskfair fce --input runs.parquet --base-labels run1 run2 run3 --sensitive sex \\
      --n-clusters 4 --store mine.zarr
  daskfair fce --dataset adult --n-clusters 2 --n-runs 20 --methods kmeans spectral --store a.zarr
"""

_PREDICT_HELP = """\
Predict every row of a table with a stored model: the model of an fkr run (with the run's
encoder and scaling), a point of a safairkm front, or a model saved by daskfair.save. The
workers read, encode and predict each partition and write it as Parquet; --output appears
only once every partition is written. Levels of text columns the model never saw are
counted and reported.

examples:
  daskfair predict census.zarr --input applicants/ --output scores/ --keep id
  daskfair predict front.zarr --balance 0.8 --input people.csv --output clusters/
"""

_AUDIT_HELP = """\
Audit binary decisions by group: per-group rates (selection, true and false positive,
error, precision; ROC AUC with --score), their differences and ratios against a reference
group and between the extremes, with bootstrap intervals and tests corrected for
multiplicity. One pass over the table: the bootstrap resamples its count table, so every
replicate is free. Several --sensitive columns audit every combination of their values.

examples:
  daskfair audit --input decisions.parquet --label hired --prediction offer \\
      --sensitive sex race --min-group-size 30 --report audit.html
  daskfair audit --input applicants/ --model credit.zarr --label default --pos-label 0 \\
      --sensitive sex --store credit-audit.zarr
"""

_SHOW_HELP = """\
Summarise a stored run: kind, status, parameters, results, arrays. A run that did not
finish is shown as INCOMPLETE (exit status 1).

example:
  daskfair show front.zarr
"""

_PLOT_HELP = """\
Draw a finished run as a PNG: the Pareto fronts (safairkm, demo), the disparity/error
frontier (fkr) or the FCE metrics against the base clusterings (fce).

example:
  daskfair plot front.zarr                  # writes front.png
  daskfair plot credit.zarr -o tradeoff.png
"""


def _pair(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a pair is n_a,n_b (e.g. 20,4), got {text!r}") from None
    return a, b


def _number_or_auto(cast: Any) -> Any:
    def parse(text: str) -> Any:
        if text == "auto":
            return text
        try:
            return cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number or 'auto', got {text!r}") from None

    parse.__name__ = f"{cast.__name__} or auto"
    return parse


def _confidence(text: str) -> float | None:
    """--disparity-confidence: a number or 'none' (its range is the estimator's to check)."""
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number or 'none', got {text!r}") from None


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
    g.add_argument("--random-state", type=int, default=0, help="random seed (default 0)")
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


def _sub(sub: Any, name: str, help_: str, description: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help_, description=description, allow_abbrev=False,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (also renders ``--help`` in the docs)."""
    parser = argparse.ArgumentParser(
        prog="daskfair", allow_abbrev=False,
        description="Fair machine learning at any scale with Dask: FKR-F2E, SAfairKM, FCE.",
    )
    parser.add_argument("--version", action="version", version=f"daskfair {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in (_add_demo, _add_fkr, _add_safairkm, _add_fce, _add_predict, _add_audit,
                _add_store_and_data):
        add(sub)
    return parser


def subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of one command."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def _add_demo(sub: Any) -> None:
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


def _add_kernel_options(fkr: Any) -> None:
    g = fkr.add_argument_group("kernel")
    g.add_argument("--kernel", default="rbf", choices=["linear", "polynomial", "sigmoid", "rbf"],
                   help="kernel (default rbf; the paper used polynomial on Credit and Crime)")
    g.add_argument("--gammas", type=float, nargs="+", metavar="G",
                   help="kernel coefficients searched by the cross-validation (two passes "
                        "each; default: the width chosen from the data, gammas='auto')")
    g.add_argument("--degree", type=int, default=3, help="polynomial degree (default 3)")
    g.add_argument("--coef0", type=float, default=1.0, help="kernel constant c (default 1)")
    g.add_argument("--n-landmarks", type=_number_or_auto(int), metavar="M",
                   help="Nyström landmarks, or auto (the default: chosen from the data, the "
                        "fewest of 250, 500, 1000, ... that capture 99%% of the kernel's "
                        "trace on held-out rows; 1000 for "
                        "--n-fair-features); a training set of at most M rows makes every "
                        "row a landmark: the exact kernel model")
    g.add_argument("--max-landmarks", type=int, metavar="M",
                   help="the ceiling of the landmarks chosen from the data (default 2000)")


def _add_fkr(sub: Any) -> None:
    fkr = _sub(sub, "fkr", "FKR-F²E and its baselines: disparity and error", _FKR_HELP)
    _add_input_options(fkr)
    g = fkr.add_argument_group("fairness and model selection")
    g.add_argument("--disparity-bound", type=float, default=0.01, metavar="B",
                   help="largest disparity accepted (default 0.01): the demographic parity "
                        "difference of the predictions, or the gap of mean predictions for "
                        "a regression; compared with the validation disparity plus a margin "
                        "for its noise")
    g.add_argument("--disparity-confidence", type=_confidence, default=0.9, metavar="C",
                   help="confidence that the population's disparity (or, with --new-rows, "
                        "that of a sample of new rows) is within the bound: an upper "
                        "confidence bound over every pair of groups is compared with it "
                        "(default 0.9; 'none': the validation disparity alone)")
    g.add_argument("--new-rows", type=int, metavar="N",
                   help="bound the disparity measured on a new sample of N rows instead of "
                        "the population's (its noise added to the margin)")
    g.add_argument("--constraints", default="demographic_parity",
                   choices=["demographic_parity", "equalized_odds"],
                   help="what the bound limits (classification; default demographic parity)")
    g.add_argument("--cv", type=int, default=5, help="cross-validation folds (default 5)")
    _add_kernel_options(fkr)
    g = fkr.add_argument_group("the paper's FKR-F²E (instead of the selection)")
    g.add_argument("--n-fair-features", type=int, nargs="+", metavar="K",
                   help="fit FKR-F²E with k fair features for each K (the trade-off)")
    g.add_argument("--objective", default="mean_discrepancy",
                   choices=["mean_discrepancy", "paper"],
                   help="eigenproblem (default: the literal mean discrepancy; 'paper' is the "
                        "paper's eq. 17/18, the constant predictor on the paper's data)")
    g.add_argument("--fairness-weight", type=float,
                   help="scale-free trade-off γ of --objective mean_discrepancy "
                        "(default: the exact constraint)")
    g.add_argument("--relative-alpha", type=float,
                   help="relative ridge penalty (default 1e-4)")
    g = fkr.add_argument_group("data")
    g.add_argument("--task", default="auto", choices=["auto", "classification", "regression"],
                   help="default: classification for a binary label")
    g.add_argument("--test", metavar="PATH",
                   help="your own test table, with the columns of --input (instead of a "
                        "split)")
    g.add_argument("--split", type=int, default=0,
                   help="published split of the FKR-F²E data sets (default 0)")
    g.add_argument("--test-size", type=float, metavar="F",
                   help="expected test share of daskfair.train_test_split, a seeded hash "
                        "of the row numbers (other data; default 0.25)")
    g.add_argument("--baselines", action="store_true",
                   help="also fit the same search without a bound and the constant "
                        "predictor, and score them on the test rows")
    _add_cluster_options(fkr)
    _add_run_options(fkr, "fkr", resume=False)


def _add_safairkm(sub: Any) -> None:
    sa = _sub(sub, "safairkm", "the SAfairKM cost/balance Pareto front", _SAFAIRKM_HELP)
    _add_input_options(sa)
    g = sa.add_argument_group("SAfairKM")
    g.add_argument("--n-clusters", type=int, default=10, metavar="K", help="K (default 10)")
    g.add_argument("--n-init", type=int, default=30,
                   help="starting label vectors (default 30)")
    g.add_argument("--max-iter", type=int, default=500, help="iterations (default 500)")
    g.add_argument("--budget", type=int, default=1500,
                   help="stop when the front holds this many points (default 1500)")
    g.add_argument("--update-pairs", type=_pair, nargs="+", metavar="NA,NB",
                   default=list(DEFAULT_PAIRS),
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
    g.add_argument("--vfairkm-fairness-weights", type=float, nargs="*",
                   default=[0.0, 200.0, 400.0, 800.0], metavar="MU",
                   help="μ values of the VfairKM baseline (none to skip)")
    g.add_argument("--checkpoint-every", type=int, default=10, metavar="T",
                   help="checkpoint every T iterations (default 10)")
    _add_cluster_options(sa)
    _add_run_options(sa, "safairkm", resume=True)


def _add_fce(sub: Any) -> None:
    fce = _sub(sub, "fce", "fair clustering ensemble: base clusterings and consensus",
               _FCE_HELP)
    _add_input_options(fce, pool=True)
    g = fce.add_argument_group("FCE")
    g.add_argument("--n-clusters", type=_number_or_auto(int), default="auto", metavar="C",
                   help="consensus clusters c (default auto: chosen by silhouette)")
    g.add_argument("--n-runs", type=int, default=20,
                   help="base clusterings m (of a pool: the first m; default 20)")
    g.add_argument("--methods", nargs="+", default=["kmeans"],
                   choices=["kmeans", "minibatch", "spectral", "agglomerative"],
                   help="base clustering methods, used in turn (default kmeans; spectral is "
                        "kernel PCA + k-means on a Nyström rbf embedding)")
    g.add_argument("--base-labels", nargs="+", metavar="COLUMN",
                   help="columns of the --input table that are base clusterings already made "
                        "(one run each, cluster ids as their tools wrote them: any integers, "
                        "-1 included), instead of clustering the features")
    g.add_argument("--base-n-clusters", type=int, metavar="C",
                   help="clusters per base clustering (default: --n-clusters)")
    g.add_argument("--fairness-weight", type=_number_or_auto(float), default="auto",
                   help="λ2: a number or auto (default auto)")
    g.add_argument("--consensus-weight", type=float, default=0.001,
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


def _add_predict(sub: Any) -> None:
    p = _sub(sub, "predict", "predict a table with a stored model, into Parquet", _PREDICT_HELP)
    p.add_argument("store", metavar="STORE",
                   help="a model saved by daskfair.save, or a finished fkr or safairkm run")
    p.add_argument("--input", required=True, metavar="PATH",
                   help="the table to predict: CSV file or glob (optionally .gz), Parquet file, "
                        "directory or glob")
    p.add_argument("--output", required=True, metavar="PATH",
                   help="a new folder for the Parquet predictions (one file per partition)")
    p.add_argument("--keep", nargs="+", metavar="COLUMN", default=[],
                   help="table columns copied into the predictions (an id, say)")
    point = p.add_mutually_exclusive_group()
    point.add_argument("--front-point", type=int, metavar="I",
                       help="safairkm runs: the point of the front (0: the lowest cost)")
    point.add_argument("--balance", type=float, metavar="B",
                       help="safairkm runs: the point whose balance is closest to B")
    p.add_argument("--digest", metavar="HEX",
                   help="refuse the model unless its digest is this one (daskfair show "
                        "prints it; its sender publishes it)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace predictions daskfair wrote at --output (nothing else)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    _add_cluster_options(p)


def _add_audit(sub: Any) -> None:
    p = _sub(sub, "audit", "audit decisions by group, with intervals and a report",
             _AUDIT_HELP)
    g = p.add_argument_group("what is audited")
    g.add_argument("--input", required=True, metavar="PATH",
                   help="the table: CSV file or glob (optionally .gz), Parquet file, directory "
                        "or glob")
    g.add_argument("--label", required=True, metavar="COLUMN", help="the true outcome")
    g.add_argument("--task", choices=("classification", "regression"),
                   default="classification",
                   help="regression: --label and the predictions are numbers (amounts, hours, "
                        "prices), audited by the groups' mean prediction, target, residual, "
                        "absolute and squared error (default %(default)s)")
    g.add_argument("--prediction", metavar="COLUMN", help="the decision made")
    g.add_argument("--score", metavar="COLUMN",
                   help="a score (higher: more favourable), for the per-group ROC AUC")
    g.add_argument("--model", metavar="STORE",
                   help="predict the decisions and scores with this stored classifier, in the "
                        "same pass (instead of --prediction and --score)")
    g.add_argument("--sensitive", required=True, nargs="+", metavar="COLUMN",
                   help="sensitive columns; several: every combination of their values is a "
                        "group (a missing value is the group 'unknown')")
    g.add_argument("--control", nargs="+", metavar="COLUMN",
                   help="control columns (a region, a period): the groups are compared within "
                        "every combination of their values")
    g.add_argument("--weight", metavar="COLUMN", help="row weights")
    g.add_argument("--pos-label", default="1", metavar="VALUE",
                   help="the favourable value of --label and the decisions (default 1)")
    g.add_argument("--metrics", nargs="+", metavar="NAME",
                   help="further metrics of each group's counts, by fairlearn's or "
                        "scikit-learn's name: false_negative_rate, true_negative_rate, "
                        "negative_predictive_value, false_discovery_rate, false_omission_rate, "
                        "accuracy_score, balanced_accuracy_score, f1_score, recall_score, "
                        "precision_score")
    c = p.add_argument_group("calibration within groups")
    c.add_argument("--calibration", action="store_true",
                   help="of --score (probabilities in [0, 1]): each group's expected "
                        "calibration error, and a reliability plot per group in --report")
    c.add_argument("--n-bins", type=int, default=10, metavar="N",
                   help="bins of --calibration (default %(default)s)")
    c.add_argument("--strategy", choices=("uniform", "quantile"), default="uniform",
                   help="bins of --calibration of equal width, or holding equal shares of "
                        "each group's rows (default %(default)s)")
    _add_audit_output(p)


def _add_audit_output(p: Any) -> None:
    s = p.add_argument_group("statistics")
    s.add_argument("--n-boot", type=int, default=1000, metavar="B",
                   help="bootstrap replicates (default %(default)s; 0: Wilson intervals only)")
    s.add_argument("--confidence", type=float, default=0.95, metavar="C",
                   help="coverage of the intervals; the tests' level is 1 - C (default "
                        "%(default)s)")
    s.add_argument("--min-group-size", type=int, default=1, metavar="N",
                   help="groups of fewer rows are counted but their rates are not reported or "
                        "compared (default 1: every group)")
    s.add_argument("--reference-group", nargs="+", metavar="VALUE",
                   help="the group the others are compared with, one value per --sensitive "
                        "column (default: the largest group)")
    o = p.add_argument_group("output")
    o.add_argument("--store", default="daskfair-audit.zarr", metavar="PATH",
                   help="zarr store of the audit (default %(default)s)")
    o.add_argument("--report", metavar="HTML", help="also write a self-contained HTML report")
    o.add_argument("--overwrite", action="store_true",
                   help="replace the daskfair audit in --store (nothing else is replaced)")
    _add_break_lock(o)
    o.add_argument("--no-progress", action="store_true", help="no progress bars")
    _add_cluster_options(p)


def _add_store_and_data(sub: Any) -> None:
    show = _sub(sub, "show", "summary of a stored run", _SHOW_HELP)
    show.add_argument("store", metavar="STORE", help="path of the run's zarr store")

    plot = _sub(sub, "plot", "PNG of a front, a trade-off curve or FCE metrics", _PLOT_HELP)
    plot.add_argument("store", metavar="STORE", help="path of a finished run's zarr store")
    plot.add_argument("-o", "--output", metavar="PNG",
                      help="where to write the figure (default: STORE with .png)")
    plot.add_argument("--overwrite", action="store_true",
                      help="replace a figure daskfair wrote there (nothing else is replaced)")

    ds = _sub(sub, "datasets", "list and verify the real data sets", _DATASETS_HELP)
    ds.add_argument("--data-dir", metavar="PATH",
                    help="data directory (default: DASKFAIR_DATA, else ../shared/data, else "
                         "your cache folder)")
    ds.add_argument("--fetch", nargs="+", metavar="NAME",
                    help="download these data sets or FCE pools (or all) if missing")
    ds.add_argument("--verify", action="store_true",
                    help="check every file's SHA-256 (SHA256SUMS, or daskfair's registry)")
