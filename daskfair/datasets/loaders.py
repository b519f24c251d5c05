"""The real data sets: :class:`Dataset` and :func:`load_dataset` (encodings: docs/datasets.md)."""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import files
from .files import checked_file

__all__ = ["DATASETS", "Dataset", "list_datasets", "load_dataset"]

DATASETS = ("adult", "bank_marketing", "compas", "credit_default", "communities_crime",
            "census_income_kdd", "ffe_credit", "ffe_crime", "ffe_compas", "safairkm_adult",
            "safairkm_bank")


@dataclass(frozen=True)
class Dataset:
    """A loaded data set (made by :func:`load_dataset` and :func:`load_mnist_usps`).

    Parameters
    ----------
    name, description : str
        The data set's name, and one line on its source file and encoding.
    X : ndarray of shape (n_samples, n_features)
        The features, float64, finite, not scaled; never the sensitive attribute or the label.
    y : ndarray of shape (n_samples,) or None
        The label (None for a set without one).
    sensitive, groups : ndarray of shape (n_samples,) and (n_groups,)
        The sensitive attribute as int64 codes into ``groups``, the sorted group names.
    sensitive_name : str
        Which attribute is the sensitive one.
    feature_names : list of str
        A name for every column of ``X``.
    splits : list of ndarray or None
        The authors' training index arrays (0-based), for the sets that come with them.
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None
    sensitive: np.ndarray
    groups: np.ndarray
    sensitive_name: str
    feature_names: list[str]
    splits: list[np.ndarray] | None
    description: str


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset` (:data:`DATASETS`).

    Returns
    -------
    list of str
    """
    return list(DATASETS)


def encode(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """int64 codes of ``values`` into their sorted distinct values, and those values."""
    groups, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.astype(np.int64), groups


def _frame_to_X(df: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """float64 X with the non-numeric columns one-hot (a missing value its own level), names."""
    categorical = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    df = df.copy()
    for col in categorical:
        df[col] = df[col].astype("string").fillna("missing").str.strip()
    out = pd.get_dummies(df, columns=categorical, prefix_sep="=", dtype=np.float64)
    return out.to_numpy(dtype=np.float64), [str(c) for c in out.columns]


def _choose(name: str, attribute: str | None, options: dict[str, Any]) -> str:
    """The sensitive attribute asked for (None: the first option), or ValueError."""
    key = next(iter(options)) if attribute is None else attribute
    if key not in options:
        raise ValueError(f"sensitive_attribute={attribute!r} is not available for {name!r}; "
                         f"choose one of {list(options)}.")
    return key


def make_dataset(name: str, X: np.ndarray, y: Any, s_values: Any, s_name: str,
                 features: list[str], description: str,
                 splits: list[np.ndarray] | None = None) -> Dataset:
    """A :class:`Dataset` of float64 ``X``, the groups encoded from ``s_values``."""
    codes, groups = encode(s_values)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.isfinite(X).all():  # pragma: no cover - guarded by each loader's encoding
        raise ValueError(f"{name}: the encoded features are not finite.")
    return Dataset(name=name, X=X, y=None if y is None else np.asarray(y), sensitive=codes,
                   groups=groups, sensitive_name=s_name, feature_names=features,
                   splits=splits, description=description)


_ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
               "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
               "hours-per-week", "native-country", "income"]


def _adult(root: Path, attribute: str | None) -> Dataset:
    s_col = _choose("adult", attribute, {"sex": 0, "race": 0})
    df = pd.read_csv(checked_file(root, "adult/adult.data"), header=None, names=_ADULT_COLS,
                     skipinitialspace=True, na_values="?")
    y = (df.pop("income").str.strip() == ">50K").astype(np.int64).to_numpy()
    s = df.pop(s_col).str.strip()
    X, names = _frame_to_X(df)
    return make_dataset("adult", X, y, s, s_col, names,
                        "UCI Adult (adult.data), one-hot categoricals")


def _bank(root: Path, attribute: str | None) -> Dataset:
    _choose("bank_marketing", attribute, {"marital": 0})
    df = pd.read_csv(checked_file(root, "bank_marketing/bank-additional-full.csv"), sep=";")
    df = df[df["marital"] != "unknown"].reset_index(drop=True)
    y = (df.pop("y") == "yes").astype(np.int64).to_numpy()
    s = df.pop("marital")
    df = df.drop(columns=["duration"])
    X, names = _frame_to_X(df)
    return make_dataset("bank_marketing", X, y, s, "marital", names,
                        "UCI Bank Marketing without marital 'unknown', duration dropped")


def _census(root: Path, attribute: str | None) -> Dataset:
    s_col = {"sex": 12, "race": 10}[_choose("census_income_kdd", attribute,
                                            {"sex": 12, "race": 10})]
    df = pd.read_csv(checked_file(root, "census_income_kdd/census_income_1994_1995_train.csv.gz"),
                     header=None, na_values="?", skipinitialspace=True)
    y = df.pop(41).astype(str).str.contains("50000+", regex=False).astype(np.int64).to_numpy()
    s = df.pop(s_col).astype(str).str.strip()
    df = df.drop(columns=[24])
    cols = []
    for c in df.columns:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col):
            cols.append(col.fillna(0).to_numpy(dtype=np.float64))
        else:
            cols.append(col.astype("category").cat.codes.to_numpy(dtype=np.float64))
    names = [f"col{c}" for c in df.columns]
    return make_dataset("census_income_kdd", np.column_stack(cols), y, s,
                        {12: "sex", 10: "race"}[s_col], names,
                        "UCI Census-Income (KDD) train, categoricals as codes, weight dropped")


def _communities(root: Path, attribute: str | None) -> Dataset:
    _choose("communities_crime", attribute, {"racepctblack": 0})
    names_file = checked_file(root, "communities_crime/communities.names").read_text(
        errors="ignore")
    attrs = [line.split()[1] for line in names_file.splitlines()
             if line.startswith("@attribute")]
    df = pd.read_csv(checked_file(root, "communities_crime/communities.data"), header=None,
                     na_values="?", names=attrs)
    y = df.pop("ViolentCrimesPerPop").to_numpy(dtype=np.float64)
    s = (df.pop("racepctblack") >= 0.5).astype(np.int64)
    df = df.drop(columns=["state", "county", "community", "communityname", "fold"])
    df = df.loc[:, df.notna().all()]
    return make_dataset("communities_crime", df.to_numpy(np.float64), y, s, "racepctblack>=0.5",
                        list(df.columns), "UCI Communities and Crime, complete columns only")


def _compas(root: Path, attribute: str | None) -> Dataset:
    s_col = _choose("compas", attribute, {"race": 0, "sex": 0})
    df = pd.read_csv(checked_file(root, "compas/compas-scores-two-years.csv"))
    other = "sex" if s_col == "race" else "race"
    base = df[["age", "priors_count", "juv_fel_count", "juv_misd_count",
               "juv_other_count"]].astype(np.float64)
    base["charge_felony"] = (df["c_charge_degree"] == "F").astype(np.float64)
    dummies = pd.get_dummies(df[other], prefix=other, prefix_sep="=", dtype=np.float64)
    feats = pd.concat([base, dummies], axis=1)
    return make_dataset("compas", feats.to_numpy(np.float64),
                        df["two_year_recid"].to_numpy(np.int64),
                        df[s_col], s_col, list(feats.columns),
                        "ProPublica COMPAS two-year recidivism")


def _credit(root: Path, attribute: str | None) -> Dataset:
    s_col = _choose("credit_default", attribute, {"EDUCATION": 0, "SEX": 0})
    df = pd.read_csv(checked_file(root, "credit_default/UCI_Credit_Card.csv"))
    y = df.iloc[:, -1].to_numpy(np.int64)
    df = df.iloc[:, :-1].drop(columns=["ID"])
    s = df.pop(s_col)
    return make_dataset("credit_default", df.to_numpy(np.float64), y, s, s_col, list(df.columns),
                        "UCI Default of Credit Card Clients")


def _permutation_splits(index: np.ndarray, n_train: int) -> list[np.ndarray]:
    """Each trial's first ``n_train`` rows of its 1-based permutation, 0-based and sorted."""
    return [np.sort(index[:n_train, t] - 1).astype(np.int64) for t in range(index.shape[1])]


def _ffe_credit(root: Path, attribute: str | None) -> Dataset:
    _choose("ffe_credit", attribute, {"education": 0})
    df = pd.read_csv(checked_file(root, "ffe_splits/creditcarddefault/creditcarddefault.csv"),
                     header=None).astype(np.float64)
    idx = pd.read_csv(checked_file(root, "ffe_splits/creditcarddefault/creditdefault_index.csv"),
                      header=None).to_numpy(np.int64)
    X = df.drop(columns=[2, 23])
    return make_dataset("ffe_credit", X.to_numpy(), df[23].to_numpy(np.int64), df[2].astype(int),
                        "education (binarised)", [f"col{c}" for c in X.columns],
                        "FKR-F²E authors' Credit Default (20,000 rows)",
                        [np.sort(row) for row in idx])


def _ffe_crime(root: Path, attribute: str | None) -> Dataset:
    _choose("ffe_crime", attribute, {"minority": 0})
    df = pd.read_csv(checked_file(root, "ffe_splits/communitycrime/crimecommunity.csv"),
                     header=None)
    idx = pd.read_csv(checked_file(root, "ffe_splits/communitycrime/crimecommunity_index.csv"),
                      header=None).to_numpy(np.int64)
    X = df.iloc[:, 1:100]  # col 100 is the target before binarisation (a leak): dropped
    return make_dataset("ffe_crime", X.to_numpy(np.float64), df[101].to_numpy(np.int64),
                        df[0].astype(int), "minority", [f"col{c}" for c in X.columns],
                        "FKR-F²E authors' Communities and Crime (1,993 rows)",
                        _permutation_splits(idx, round(0.75 * len(df))))


def _ffe_compas(root: Path, attribute: str | None) -> Dataset:
    _choose("ffe_compas", attribute, {"race": 0})
    with zipfile.ZipFile(checked_file(root, "ffe_splits/compas/compas.zip")) as z:
        df = pd.read_csv(io.BytesIO(z.read("compas/compas.csv")), header=None)
        idx = pd.read_csv(io.BytesIO(z.read("compas/compas_index.csv")),
                          header=None).to_numpy(np.int64)
    X = df.iloc[:, :14]
    return make_dataset("ffe_compas", X.to_numpy(np.float64), df[15].to_numpy(np.int64),
                        df[14].astype(int), "race (inferred: col 14)",
                        [f"col{c}" for c in X.columns],
                        "FKR-F²E authors' COMPAS (16,000 rows, 2019 file)",
                        _permutation_splits(idx, round(0.75 * len(df))))


def _safairkm(which: str) -> Callable[[Path, str | None], Dataset]:
    """The loader of the SAfairKM authors' ``which`` arrays."""
    def load(root: Path, attribute: str | None) -> Dataset:
        _choose(f"safairkm_{which.lower()}", attribute, {"demograph": 0})
        with np.load(checked_file(root, f"safairkm/{which}.npz")) as z:
            X, s = z["X_org"].astype(np.float64), z["demograph"]
        return make_dataset(f"safairkm_{which.lower()}", X, None, s, "demograph",
                            [f"x{i}" for i in range(X.shape[1])],
                            f"SAfairKM authors' {which} arrays (X_org, demograph)")
    return load


_LOADERS: dict[str, Callable[[Path, str | None], Dataset]] = {
    "adult": _adult, "bank_marketing": _bank, "census_income_kdd": _census,
    "communities_crime": _communities, "compas": _compas, "credit_default": _credit,
    "ffe_credit": _ffe_credit, "ffe_crime": _ffe_crime, "ffe_compas": _ffe_compas,
    "safairkm_adult": _safairkm("Adult"), "safairkm_bank": _safairkm("Bank"),
}


def load_dataset(name: str, data_dir: str | os.PathLike[str] | None = None, *,
                 sensitive_attribute: str | None = None) -> Dataset:
    """Load a real data set by name (how each is encoded: docs/datasets.md).

    Sensitive attributes, the default first: adult and census_income_kdd "sex", "race";
    bank_marketing "marital"; communities_crime "racepctblack"; compas "race", "sex";
    credit_default "EDUCATION", "SEX"; ffe_credit "education", ffe_crime "minority", ffe_compas
    "race" (the ``ffe_*`` sets with ``splits``); safairkm_adult, safairkm_bank "demograph"
    (y None).

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    data_dir : path-like, default=None
        The data directory (None: :func:`data_dir`'s choice).
    sensitive_attribute : str, default=None
        Which attribute is the sensitive one (None: the set's default).

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError, DataUnavailableError, DataIntegrityError
        A file is missing from a folder kept by hand, cannot be downloaded, or is corrupt.

    Examples
    --------
    >>> adult = load_dataset("adult")
    >>> adult.X.shape[0], adult.sensitive_name, list(adult.groups)
    (32561, 'sex', ['Female', 'Male'])
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown data set {name!r}; choose one of {list(DATASETS)}.")
    return _LOADERS[name](files.data_dir(data_dir), sensitive_attribute)
