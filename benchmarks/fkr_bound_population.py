"""FairKernelClassifierCV's disparity bound checked where the population is known.

A synthetic population (``make_fair_regression``, the label its target above the median)
with 2 groups (70/30) or 7 groups of unequal sizes (30 % down to 5 %); each of ``--seeds``
fits draws its own ``--train-rows`` training rows (three times as many with 7 groups), and
one sample of ``--held-out`` rows stands for the population. Each fit (5 folds,
``--landmarks`` landmarks, default grid) then chooses at bounds .01 and .02 by three rules,
from the same validation results (``choose``):

* ``population``: the default, an upper 90 % bound of the population's disparity over every
  pair of groups (docs/design.md#fkr-selection-margin);
* ``one fold of new rows``: the rule before it, d + z·s·√(1 + F) with s the standard error of
  the observed worst pair (reconstructed from ``cv_disparity_sem_``);
* ``none``: the validation disparity alone.

For each rule and bound: the share of fits whose chosen model's population disparity
(demographic parity difference on the held-out rows) is within the bound (goal for the
default: at least 90 % at ``disparity_confidence=0.9``), its mean, and the mean error.

    python benchmarks/fkr_bound_population.py [--seeds 50] [--train-rows 20000]
        [--held-out 1000000] [--landmarks 100]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from fkr_vs_fairlearn import one_fold_margin

from _common import RESULTS, pyplot, write_result
from daskfair import FairKernelClassifierCV, make_fair_regression
from daskfair.fkr import selection

NAME = "fkr_bound_population"
SETTINGS = {
    "2 groups (70/30)": (1, dict(n_groups=2, group_weights=[0.7, 0.3], group_shift=0.3,
                                 group_effect=0.3)),
    "7 groups (30% to 5%)": (3, dict(n_groups=7,
                                     group_weights=[0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05],
                                     group_shift=0.1, group_effect=0.1)),
}
BOUNDS = (0.01, 0.02)


RULES = {"population": (selection.upper_bounds, 0.9),
         "one fold of new rows": (one_fold_margin, 0.9),
         "none": (selection.upper_bounds, None)}


def _disparity(pred: np.ndarray, s: np.ndarray, n_groups: int) -> float:
    rates = np.bincount(s, weights=pred, minlength=n_groups) / np.bincount(s, minlength=n_groups)
    return float(rates.max() - rates.min())


def run_setting(scale: int, kw: dict, args: argparse.Namespace) -> dict:
    train = args.train_rows * scale
    n = train * args.seeds + args.held_out
    X, y, s = (np.asarray(a) for a in make_fair_regression(n, 5, random_state=123, **kw))
    y = (y > np.median(y)).astype(int)
    Xh, yh, sh = X[-args.held_out:], y[-args.held_out:], s[-args.held_out:]
    out = {f"{rule} @ {b}": [] for rule in RULES for b in BOUNDS}
    seconds = []
    for seed in range(args.seeds):
        rows = slice(seed * train, (seed + 1) * train)
        clf = FairKernelClassifierCV(n_landmarks=args.landmarks, cv=5, random_state=seed)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no candidate reaches ...": the fairest is used
            clf.fit(X[rows], y[rows], sensitive_features=s[rows])
            seconds.append(time.perf_counter() - t0)
            for rule, (fn, confidence) in RULES.items():
                selection.upper_bounds = fn
                try:
                    for b in BOUNDS:
                        clf.choose(b, confidence)
                        pred = clf.predict(Xh)
                        out[f"{rule} @ {b}"].append(
                            (_disparity(pred, sh, kw["n_groups"]), float(np.mean(pred != yh)),
                             float(clf.best_disparity_interval_[1])))
                finally:
                    selection.upper_bounds = RULES["population"][0]
    summary = {}
    for key, rows in out.items():
        a = np.array(rows)
        bound = float(key.rsplit("@ ", 1)[1])
        summary[key] = {"within_bound": float(np.mean(a[:, 0] <= bound)),
                        "population_disparity_mean": float(a[:, 0].mean()),
                        "population_disparity_p90": float(np.quantile(a[:, 0], 0.9)),
                        "error_mean": float(a[:, 1].mean()),
                        "upper_mean": float(a[:, 2].mean())}
    return {"fit_seconds_mean": float(np.mean(seconds)), "rules": summary, "train_rows": train,
            "group_rows": [int(v) for v in np.bincount(s[:train])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--train-rows", type=int, default=20_000)
    ap.add_argument("--held-out", type=int, default=1_000_000)
    ap.add_argument("--landmarks", type=int, default=100)
    args = ap.parse_args()
    results = {"seeds": args.seeds, "train_rows": args.train_rows, "held_out": args.held_out,
               "landmarks": args.landmarks, "confidence": 0.9, "settings": {}}
    for name, (scale, kw) in SETTINGS.items():
        results["settings"][name] = run_setting(scale, kw, args)
        for key, v in results["settings"][name]["rules"].items():
            print(f"{name}, {key}: within {v['within_bound']:.2f}, population disparity "
                  f"{v['population_disparity_mean']:.4f}, error {v['error_mean']:.4f}",
                  flush=True)
        write_result(NAME, results)
    plot(results)


def plot(results: dict) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(results["settings"]), figsize=(11, 3.8))
    for ax, (name, setting) in zip(np.atleast_1d(axes), results["settings"].items(),
                                   strict=True):
        for rule, marker in zip(RULES, "o^s", strict=True):
            pts = [(v["population_disparity_mean"], v["error_mean"])
                   for k, v in setting["rules"].items() if k.startswith(rule + " @")]
            ax.plot(*zip(*pts, strict=True), marker=marker, label=rule)
        for b in BOUNDS:
            ax.axvline(b, color="grey", ls="--", lw=1)
        ax.set_title(name)
        ax.set_xlabel("mean population disparity of the chosen model")
        ax.set_ylabel("mean population error")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{NAME}.png", dpi=120)


if __name__ == "__main__":
    main()
