"""FairKernelClassifierCV against fairlearn on the same splits: the SD–error frontier.

For each data set and split, in one process and on the same rows:

* ``FairKernelClassifierCV`` with its defaults (demographic parity, 5 folds, the width
  chosen from the data, ``gammas="auto"``; ``--before``: also ``gammas=None``, the default
  before issue 49, on the same rows; ``--cv-gamma-scales``: a grid instead): one fit; every
  bound is then a re-choice from the stored validation scores (``choose``, no pass). Its
  test "oracle sweep" (every refitted candidate at every threshold, scored on the test
  rows) shows the attainable front.
* fairlearn 0.15's ``ExponentiatedGradient(LogisticRegression, DemographicParity(ε))`` at the
  same bounds ε, on standardised features (randomised predictions, fixed seed).
* ``ExponentiatedGradient`` and ``ThresholdOptimizer`` over Nyström + StandardScaler +
  LogisticRegression (the same kernel and landmarks count; ThresholdOptimizer needs the
  sensitive attribute at prediction time, FKR does not).
* unconstrained ``LogisticRegression``, kernel ridge (``FairKernelRidge(fairness_weight=0)``
  at 0.5), the plain ``FairKernelClassifier`` (fair features, squared and logistic loss),
  and the constant predictor.

Data: the FKR-F²E authors' Credit, Crime and COMPAS files with their splits (min-max scaled
on the training rows, as the seed does), UCI Adult (sex; stratified 75/25 splits by
seed, standardised on the training rows) and UCI Census-Income (KDD) (sex; the official
199,523/99,762 split, one split only; its 28 text columns one-hot encoded over both files,
the instance weight dropped, standardised on the training rows). fairlearn is a benchmark
extra only.

FairKernelClassifierCV is reported three times per bound, from the same fit: with its
default selection (an upper 90 % bound of the population's disparity,
``disparity_confidence=0.9``), with none (``choose(b, disparity_confidence=None)``), and with
the selection before issue 38 (a prediction bound for one fold of new rows,
d + z·s·√(1 + F)). Besides the mean frontier, the output counts, per bound, the splits
whose test SD is within the bound, and, per EG(LR) bound and split, whether FKR-CV's test
front (its choices at every bound on that split) is more accurate at EG's test SD, and
whether one of its bounds has a mean test SD at most EG's + .002 at an error no higher
(``goal_met``, issue 49's goal).

    python benchmarks/fkr_vs_fairlearn.py [--splits 5] [--datasets adult ffe_credit ...]
        [--no-nystroem] [--lean] [--before] [--gamma-scale 0.1]
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from typing import Any

import numpy as np

from _common import RESULTS, pyplot, write_result
from daskfair.datasets import load_dataset
from daskfair.fkr import FairKernelClassifier, FairKernelClassifierCV, FairKernelRidge
from daskfair.metrics import demographic_parity_difference, error_rate
from daskfair.scaling import ColumnScaler

BOUNDS = (0.001, 0.005, 0.01, 0.02, 0.03, 0.05)
DATASETS = ("adult", "ffe_credit", "ffe_crime", "ffe_compas", "census_kdd")
# also: "adult_sex_race" (Adult with sex × race groups, 7 after merging those under 300 rows)
DEFAULT = "FairKernelClassifierCV"
BEFORE = "FairKernelClassifierCV (gammas=None: before issue 49)"
NO_MARGIN = "FairKernelClassifierCV (no margin)"
PREVIOUS = "FairKernelClassifierCV (one-fold margin)"


def one_fold_margin(state: dict, confidence: Any, new_rows: Any) -> np.ndarray:
    """The selection before issue 38: d + z·s·√(1 + F), a prediction bound for the
    disparity of new rows as many as one fold (s: the observed worst pair's); a drop-in for
    ``daskfair.fkr.selection.upper_bounds``."""
    from scipy.stats import norm

    d = state["cv_disparity_"]
    if confidence is None:
        return d
    return d + norm.ppf(confidence) * np.sqrt(1 + state["n_splits_"]) * state[
        "cv_disparity_sem_"]


def choose_previous(cv: Any, bound: float) -> None:
    """``cv.choose(bound)`` by the previous margin, for comparison in the same run."""
    from daskfair.fkr import selection

    current = selection.upper_bounds
    selection.upper_bounds = one_fold_margin
    try:
        cv.choose(bound, disparity_confidence=cv.disparity_confidence)
    finally:
        selection.upper_bounds = current


def census_kdd() -> tuple[np.ndarray, ...]:
    """Census-Income (KDD): the official train/test files, text columns one-hot."""
    import pandas as pd

    from daskfair.datasets import data_dir
    from daskfair.datasets.loaders import _frame_to_X

    root = data_dir() / "census_income_kdd"
    frames = [pd.read_csv(root / f"census_income_1994_1995_{part}.csv.gz", header=None,
                          na_values="?", skipinitialspace=True) for part in ("train", "test")]
    n_train = len(frames[0])
    df = pd.concat(frames, ignore_index=True)
    y = df.pop(41).astype(str).str.contains("50000+", regex=False).to_numpy(dtype=int)
    s = (df.pop(12).astype(str).str.strip() == "Female").to_numpy(dtype=int)
    df = df.drop(columns=[24])  # the instance weight
    # the package's own encoding of text columns: stripped, "missing" a level, one-hot
    X, _ = _frame_to_X(df)
    tr = np.arange(len(y)) < n_train
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    X = (X - mu) / np.where(sd > 0, sd, 1.0)
    return X[tr], y[tr], s[tr], X[~tr], y[~tr], s[~tr]


def adult_sex_race() -> Any:
    """Adult with sex × race as the groups, those under 300 rows merged into "other" (7
    groups), sex's columns dropped from the features."""
    from types import SimpleNamespace

    d = load_dataset("adult", sensitive_attribute="race")
    names = list(d.feature_names)
    sex = np.where(d.X[:, names.index("sex=Male")] == 1, "Male", "Female")
    race = np.asarray(d.groups, dtype=object)[d.sensitive]
    group = np.char.add(np.char.add(race.astype(str), ","), sex)
    values, counts = np.unique(group, return_counts=True)
    small = set(values[counts < 300])
    group = np.where(np.isin(group, list(small)), "other", group)
    groups, codes = np.unique(group, return_inverse=True)
    keep = [j for j, n in enumerate(names) if not n.startswith("sex=")]
    return SimpleNamespace(X=d.X[:, keep], y=d.y, sensitive=codes, groups=groups,
                           splits=None)


def split(name: str, data: Any, i: int) -> tuple[np.ndarray, ...]:
    """Scaled train/test arrays of split i."""
    if name == "census_kdd":
        return data
    n = len(data.y)
    if data.splits is not None:
        train = np.unique(data.splits[i])
        test = np.setdiff1d(np.arange(n), train)
        X = ColumnScaler().fit(data.X[train]).transform(data.X)
    else:
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(np.arange(n), test_size=0.25, random_state=i,
                                       stratify=data.y * (data.sensitive.max() + 1)
                                       + data.sensitive)
        mu, sd = data.X[train].mean(axis=0), data.X[train].std(axis=0)
        X = (data.X - mu) / np.where(sd > 0, sd, 1.0)
    y, s = data.y.astype(int), data.sensitive
    return X[train], y[train], s[train], X[test], y[test], s[test]


def score(pred: np.ndarray, y: np.ndarray, s: np.ndarray) -> dict[str, float]:
    return {"sd": demographic_parity_difference(None, pred, sensitive_features=s),
            "error": error_rate(y, pred)}


def timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def recorder(rows: list[dict], name: str, i: int, yte: np.ndarray, ste: np.ndarray) -> Any:
    """A function that appends one method's test scores on split i to ``rows``."""
    def add(method: str, bound: float | None, pred: np.ndarray, seconds: float,
            **extra: Any) -> None:
        rows.append({"data": name, "split": i, "method": method, "bound": bound,
                     **score(np.asarray(pred).astype(int), yte, ste), "seconds": seconds,
                     **extra})
    return add


def gamma_for(X: np.ndarray, scale: float) -> float:
    """rbf gamma: ``scale`` / (n_features · mean feature variance)."""
    return scale / (X.shape[1] * max(float(X.var(axis=0).mean()), 1e-12))


def run_split(name: str, data: Any, i: int, args: argparse.Namespace) -> list[dict]:
    Xtr, ytr, str_, Xte, yte, ste = split(name, data, i)
    gamma = gamma_for(Xtr, args.gamma_scale)
    gammas = ("auto" if args.cv_gamma_scales is None
              else [gamma_for(Xtr, g) for g in args.cv_gamma_scales])
    rows: list[dict] = []
    add = recorder(rows, name, i, yte, ste)

    # -- daskfair ------------------------------------------------------------------------
    if args.before:  # the default before issue 49: one width, 1/n_features
        old = FairKernelClassifierCV(gammas=None, n_landmarks=args.landmarks or 1000,
                                     random_state=i)
        _, secs = timed(lambda: old.fit(Xtr, ytr, sensitive_features=str_))
        for b in BOUNDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                old.choose(b)
            add(BEFORE, b, old.predict(Xte), secs if b == BOUNDS[0] else 0.0,
                val_sd=old.best_disparity_, val_error=1 - old.best_score_)
    cv = FairKernelClassifierCV(gammas=gammas, n_landmarks=args.landmarks or "auto",
                                random_state=i)
    _, secs = timed(lambda: cv.fit(Xtr, ytr, sensitive_features=str_))
    widths = getattr(cv, "width_search_", None)
    if widths is not None:
        rows.append({"data": name, "split": i, "method": "width search",
                     "table": widths.to_dict(orient="list")})
    ranks = getattr(cv, "rank_search_", None)
    if ranks is not None:
        rows.append({"data": name, "split": i, "method": "rank search",
                     "table": ranks.to_dict(orient="list")})
    for method, confidence in ((DEFAULT, cv.disparity_confidence), (NO_MARGIN, None),
                               (PREVIOUS, "previous")):
        for b in BOUNDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                if confidence == "previous":
                    choose_previous(cv, b)
                else:
                    cv.choose(b, disparity_confidence=confidence)
            add(method, b, cv.predict(Xte), secs if b == BOUNDS[0] else 0.0,
                val_sd=cv.best_disparity_, val_sd_interval=cv.best_disparity_interval_,
                val_error=1 - cv.best_score_, chosen={
                    k: v for k, v in cv.best_params_.items() if k != "threshold"})
    # the attainable front on the test rows: every refitted candidate at every threshold
    C = cv.feature_map_.kernel(Xte)
    S = C @ cv.candidate_dual_coef_ + cv.candidate_intercept_
    sweep = []
    for k in range(S.shape[1]):
        for t in cv.thresholds_[k, ::4]:
            pred = (S[:, k] >= t).astype(int)
            sweep.append((demographic_parity_difference(None, pred, sensitive_features=ste),
                          error_rate(yte, pred)))
    sweep = np.array(sweep)
    front = []
    for sd_, err in sweep[np.lexsort((sweep[:, 1], sweep[:, 0]))]:
        if not front or err < front[-1][1]:
            front.append((float(sd_), float(err)))
    rows.append({"data": name, "split": i, "method": "FKR candidates (test sweep)",
                 "front": front})
    if args.only_cv:
        return rows
    if args.lean:
        return rows + fairlearn_rows(name, i, args, Xtr, ytr, str_, Xte, yte, ste, gamma)
    m = args.landmarks or 1000
    ridge = FairKernelRidge(0.0, gamma=gamma, n_landmarks=m, random_state=i)
    _, secs = timed(lambda: ridge.fit(Xtr, ytr, sensitive_features=str_))
    add("kernel ridge", None, ridge.predict(Xte) >= 0.5, secs)
    for loss in ("squared", "logistic"):
        for k in (10, 50, 200):
            clf = FairKernelClassifier(gamma=gamma, n_fair_features=k, loss=loss,
                                       n_landmarks=m, random_state=i)
            _, secs = timed(lambda clf=clf: clf.fit(Xtr, ytr, sensitive_features=str_))
            add(f"FairKernelClassifier ({loss})", None, clf.predict(Xte), secs,
                n_components=k)
    add("constant", None, np.full(len(yte), np.bincount(ytr).argmax()), 0.0)
    return rows + fairlearn_rows(name, i, args, Xtr, ytr, str_, Xte, yte, ste, gamma)


def fairlearn_rows(name: str, i: int, args: argparse.Namespace, Xtr: np.ndarray,
                   ytr: np.ndarray, str_: np.ndarray, Xte: np.ndarray, yte: np.ndarray,
                   ste: np.ndarray, gamma: float) -> list[dict]:
    """fairlearn's methods (and unconstrained logistic regression) on split i."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rows: list[dict] = []
    add = recorder(rows, name, i, yte, ste)
    scaler = StandardScaler().fit(Xtr)
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    lr, secs = timed(lambda: LogisticRegression(max_iter=2000).fit(Ztr, ytr))
    add("LogisticRegression", None, lr.predict(Zte), secs)
    for b in args.eg_bounds:
        eg = ExponentiatedGradient(LogisticRegression(max_iter=2000),
                                   DemographicParity(difference_bound=b))
        _, secs = timed(lambda eg=eg: eg.fit(Ztr, ytr, sensitive_features=str_))
        add("EG(LR)", b, eg.predict(Zte, random_state=0), secs,
            oracle_calls=len(eg.predictors_))
    if args.nystroem:
        from sklearn.kernel_approximation import Nystroem

        def features() -> tuple[np.ndarray, np.ndarray]:
            ny = Nystroem(gamma=gamma, n_components=args.landmarks or 1000,
                          random_state=i).fit(Xtr)
            sc = StandardScaler().fit(ny.transform(Xtr))
            return sc.transform(ny.transform(Xtr)), sc.transform(ny.transform(Xte))

        (Ntr, Nte), fsecs = timed(features)
        base = LogisticRegression(max_iter=500)
        to, secs = timed(lambda: ThresholdOptimizer(
            estimator=base, constraints="demographic_parity", predict_method="predict_proba",
            objective="accuracy_score").fit(Ntr, ytr, sensitive_features=str_))
        add("ThresholdOptimizer(Nyström+LR)", None,
            to.predict(Nte, sensitive_features=ste, random_state=0), fsecs + secs,
            uses_sensitive_at_predict=True)
        for b in args.nystroem_bounds:
            eg = ExponentiatedGradient(LogisticRegression(max_iter=500),
                                       DemographicParity(difference_bound=b))
            _, secs = timed(lambda eg=eg: eg.fit(Ntr, ytr, sensitive_features=str_))
            add("EG(Nyström+LR)", b, eg.predict(Nte, random_state=0), fsecs + secs,
                oracle_calls=len(eg.predictors_))
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Mean ± std over splits per (data, method, bound / k)."""
    import pandas as pd

    df = pd.DataFrame([r for r in rows if "front" not in r and "table" not in r])
    keys = ["data", "method", "bound", "n_components"]
    df = df.reindex(columns=[*df.columns.drop(keys, errors="ignore"), *keys])
    df[keys] = df[keys].astype(object).where(df[keys].notna(), None)
    out = []
    for key, part in df.groupby(keys, dropna=False, sort=False):
        out.append({**dict(zip(keys, key, strict=True)), "splits": len(part),
                    "sd": part["sd"].mean(), "sd_std": part["sd"].std(),
                    "error": part["error"].mean(), "error_std": part["error"].std(),
                    "seconds": part["seconds"].mean()})
    return out


def _front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Lower-left envelope of (SD, error) points."""
    out: list[tuple[float, float]] = []
    for sd, err in sorted(points):
        if not out or err < out[-1][1]:
            out.append((sd, err))
    return out


def error_at(front: list[tuple[float, float]], sd: float) -> float | None:
    """The front's error at ``sd``, linear between its points: a random mix of the two
    neighbouring classifiers has that error and no larger SD. None below the front's SD."""
    if not front or sd < front[0][0]:
        return None
    for (s0, e0), (s1, e1) in itertools.pairwise(front):
        if s0 <= sd <= s1:
            return e0 + (e1 - e0) * (sd - s0) / (s1 - s0) if s1 > s0 else min(e0, e1)
    return front[-1][1]


def comparison(summary: list[dict], rows: list[dict]) -> list[dict]:
    """At each EG(LR) bound with mean test SD ≤ .03, for both FKR-CV selections: their
    front's error at EG's mean test SD, and the splits on which their own front (the
    choices at every bound on that split) is more accurate at EG's test SD on that split
    (a split where FKR-CV has no choice as fair as EG counts as a loss)."""
    out = []
    for name in dict.fromkeys(r["data"] for r in summary):
        for method in (DEFAULT, NO_MARGIN, PREVIOUS, BEFORE):
            points = [r for r in summary if r["data"] == name and r["method"] == method]
            if not points:
                continue
            fkr = _front([(r["sd"], r["error"]) for r in summary
                          if r["data"] == name and r["method"] == method])
            for eg in (r for r in summary if r["data"] == name and r["method"] == "EG(LR)"):
                if eg["sd"] > 0.03:
                    continue
                err = error_at(fkr, eg["sd"])
                wins = []
                for i in sorted({r["split"] for r in rows if r["data"] == name}):
                    mine = _front([(r["sd"], r["error"]) for r in rows
                                   if r["data"] == name and r["split"] == i
                                   and r.get("method") == method])
                    theirs = next(r for r in rows if r["data"] == name and r["split"] == i
                                  and r.get("method") == "EG(LR)" and r["bound"] == eg["bound"])
                    at = error_at(mine, theirs["sd"])
                    wins.append(at is not None and at < theirs["error"])
                # the goal: a bound whose mean test SD is at most EG's + .002, at an
                # error no higher than EG's
                goal = any(p["sd"] <= eg["sd"] + 0.002 and p["error"] <= eg["error"] + 1e-12
                           for p in points)
                out.append({"data": name, "method": method, "eg_bound": eg["bound"],
                            "goal_met": goal,
                            "eg_sd": eg["sd"], "eg_error": eg["error"],
                            "fkr_error_at_eg_sd": err,
                            "difference": None if err is None else err - eg["error"],
                            "fkr_at_least_as_accurate": err is not None
                            and err <= eg["error"] + 1e-12,
                            "split_wins": int(sum(wins)), "splits": len(wins)})
    return out


def bound_kept(rows: list[dict]) -> list[dict]:
    """Per data set, method and bound: the splits whose test SD is within the bound."""
    out = []
    keys = dict.fromkeys((r["data"], r["method"], r["bound"]) for r in rows
                         if r.get("bound") is not None and "front" not in r
                         and "table" not in r)
    for name, method, bound in keys:
        sds = [r["sd"] for r in rows if r["data"] == name and r.get("method") == method
               and r.get("bound") == bound]
        out.append({"data": name, "method": method, "bound": bound,
                    "kept": int(sum(sd <= bound + 1e-12 for sd in sds)), "splits": len(sds)})
    return out


def plot(summary: list[dict], rows: list[dict], names: list[str], name_: str) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), squeeze=False)
    styles = {DEFAULT: ("o-", "crimson"), NO_MARGIN: ("o:", "salmon"),
              PREVIOUS: ("o--", "grey"), BEFORE: ("o-.", "purple"),
              "EG(LR)": ("s--", "tab:blue"),
              "EG(Nyström+LR)": ("^--", "tab:green")}
    for ax, name in zip(axes[0], names, strict=True):
        for r in (r for r in rows if r.get("front") and r["data"] == name and r["split"] == 0):
            f = np.array(r["front"])
            ax.step(f[:, 0], f[:, 1], where="post", color="lightgrey", lw=1,
                    label="FKR candidates, test (split 0)")
        for method, (style, color) in styles.items():
            pts = sorted((r["sd"], r["error"]) for r in summary
                         if r["data"] == name and r["method"] == method)
            if pts:
                ax.plot(*zip(*pts, strict=True), style, color=color, ms=4, label=method)
        for method, marker in (("LogisticRegression", "x"), ("kernel ridge", "+"),
                               ("constant", "D"), ("ThresholdOptimizer(Nyström+LR)", "v")):
            pts = [(r["sd"], r["error"]) for r in summary
                   if r["data"] == name and r["method"] == method]
            if pts:
                ax.plot(*pts[0], marker, color="black", label=method)
        ax.set_xlim(-0.002, 0.08)
        ax.set_title(name)
        ax.set_xlabel("test SD (mean over splits)")
        ax.set_ylabel("test error")
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name_}.png", dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--landmarks", type=int,
                    help="landmarks of every kernel method (default: FairKernelClassifierCV's "
                         "own, n_landmarks='auto'; 1000 for the others and for --before)")
    ap.add_argument("--gamma-scale", type=float, default=0.1,
                    help="rbf gamma = scale / (n_features · mean variance), for the fixed "
                         "kernels (kernel ridge, FairKernelClassifier, Nyström + LR)")
    ap.add_argument("--cv-gamma-scales", type=float, nargs="+",
                    help="a gamma grid for FairKernelClassifierCV (same units; default: its "
                         "own, gammas='auto')")
    ap.add_argument("--before", action="store_true",
                    help="also FairKernelClassifierCV(gammas=None), the default before "
                         "issue 49, on the same rows")
    ap.add_argument("--no-nystroem", dest="nystroem", action="store_false")
    ap.add_argument("--only-cv", action="store_true",
                    help="FairKernelClassifierCV alone (for exploring its settings)")
    ap.add_argument("--output", default="fkr_vs_fairlearn", help="result name")
    ap.add_argument("--nystroem-bounds", type=float, nargs="+", default=[0.01])
    ap.add_argument("--eg-bounds", type=float, nargs="+", default=list(BOUNDS))
    ap.add_argument("--lean", action="store_true",
                    help="FairKernelClassifierCV, LogisticRegression and fairlearn only")
    ap.add_argument("--nystroem-splits", type=int, default=2)
    args = ap.parse_args()
    rows: list[dict] = []
    for name in args.datasets:
        data = (census_kdd() if name == "census_kdd" else adult_sex_race()
                if name == "adult_sex_race" else load_dataset(name))
        for i in range(1 if name == "census_kdd" else args.splits):
            t0 = time.perf_counter()
            split_args = argparse.Namespace(**{**vars(args),
                                               "nystroem": args.nystroem
                                               and i < args.nystroem_splits})
            rows += run_split(name, data, i, split_args)
            print(f"{name} split {i}: {time.perf_counter() - t0:.0f} s", flush=True)
    summary = summarise(rows)
    plot(summary, rows, args.datasets, args.output)
    write_result(args.output, {
        "splits": args.splits, "landmarks": args.landmarks, "gamma_scale": args.gamma_scale,
        "cv_gamma_scales": args.cv_gamma_scales, "before": args.before,
        "splits_per_data": {name: len({r["split"] for r in rows if r["data"] == name})
                            for name in args.datasets},
        "bounds": BOUNDS, "eg_bounds": args.eg_bounds, "lean": args.lean,
        "summary": summary, "comparison": comparison(summary, rows),
        "bound_kept": bound_kept(rows), "rows": rows})


if __name__ == "__main__":
    main()
