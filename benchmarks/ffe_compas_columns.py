"""Which columns of the FKR-F²E authors' COMPAS file are the label and the groups?

The authors published compas.csv (16,000 × 16, no header, no README); ``ffe_compas`` takes
col 15 as the label and col 14 as race. This checks that inference against the file itself:
each binary column's positive rate next to the seed's constant error (.2307) and the
ProPublica data's rates, and how well each binary column is predicted from the others by
gradient boosting and logistic regression on the authors' own splits (75 % training, the
seed's ratio). A label that the features cannot predict better than its majority class
cannot give a fair regressor below the constant's error, whatever the method.

    python benchmarks/ffe_compas_columns.py [--splits 5]
"""

from __future__ import annotations

import argparse
import io
import zipfile

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _common import write_result
from daskfair.datasets import data_dir

SEED_CONSTANT_ERROR = 0.2307  # the seed's Table I, COMPAS, constant predictor


def _propublica(root) -> dict[str, float]:
    df = pd.read_csv(root / "compas" / "compas-scores.csv")
    two = pd.read_csv(root / "compas" / "compas-scores-two-years.csv")
    return {"compas-scores.csv male": float((df.sex == "Male").mean()),
            "compas-scores.csv not Caucasian": float((df.race != "Caucasian").mean()),
            "compas-scores.csv is_recid": float((df.is_recid == 1).mean()),
            "compas-scores.csv is_violent_recid": float(df.is_violent_recid.mean()),
            "two-years two_year_recid": float(two.two_year_recid.mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, default=5)
    args = ap.parse_args()
    root = data_dir()
    with zipfile.ZipFile(root / "ffe_splits" / "compas" / "compas.zip") as z:
        df = pd.read_csv(io.BytesIO(z.read("compas/compas.csv")), header=None)
        index = pd.read_csv(io.BytesIO(z.read("compas/compas_index.csv")),
                            header=None).to_numpy(np.int64)
    binary = [c for c in df if df[c].nunique() == 2]
    rows = []
    for label in binary:
        features = [c for c in df if c != label]
        X, y = df[features].to_numpy(np.float64), df[label].to_numpy(np.int64)
        per_split = []
        for split in range(args.splits):
            order = index[:, split] - 1
            train, test = order[:12_000], order[12_000:]
            rate = y[test].mean()
            gbm = HistGradientBoostingClassifier(random_state=0).fit(X[train], y[train])
            lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(
                X[train], y[train])
            per_split.append({"constant": min(rate, 1 - rate),
                              "gbm": 1 - gbm.score(X[test], y[test]),
                              "gbm_train": 1 - gbm.score(X[train], y[train]),
                              "logistic": 1 - lr.score(X[test], y[test])})
        mean = {k: float(np.mean([p[k] for p in per_split])) for k in per_split[0]}
        corr = df.corr()[label].drop(label).abs()
        row = {"column": int(label), "positive_rate": float(y.mean()),
               "max_abs_corr": float(corr.max()), "max_abs_corr_column": int(corr.idxmax()),
               **{f"{k}_error": v for k, v in mean.items()}}
        rows.append(row)
        print(row, flush=True)
    write_result("ffe_compas_columns", {
        "splits": args.splits, "seed_constant_error": SEED_CONSTANT_ERROR,
        "propublica_rates": _propublica(root), "columns": rows})


if __name__ == "__main__":
    main()
