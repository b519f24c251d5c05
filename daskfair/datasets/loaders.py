"""Real data sets, the FCE base-clustering pools, and seeded synthetic data of any size.

The files are read from a data directory, never copied into the project
(:func:`data_dir`): the ``data_dir`` argument, else ``DASKFAIR_DATA``, else the config key
``daskfair.data-dir``, else ``../shared/data`` of a development checkout, else the user's cache
folder. A folder holding ``SHA256SUMS`` is kept by hand and used as it is; any other is a cache
into which a missing file is downloaded from its publisher on first use
(:mod:`.fetch`, :mod:`.sources`). Each file's SHA-256 is checked the first
time a process reads it.

Encodings (every ``X`` is float64 and finite; the sensitive attribute and the label are never
columns of ``X``; features are not scaled — scaling belongs to the estimator or protocol):

``adult``
    adult.data (32,561 rows). Numeric columns as they are; categorical
    columns one-hot (``pandas.get_dummies``, sorted categories), a missing
    "?" its own "missing" category. Sensitive: sex (default) or race.
    y = income > 50K.
``bank_marketing``
    bank-additional-full.csv without the 80 rows whose marital status is
    "unknown" (41,108 rows, as the SAfairKM authors' Bank). Sensitive:
    marital (3 groups). y = subscribed. "duration" is dropped (known only
    after the call, UCI's own advice); categoricals one-hot.
``census_income_kdd``
    the training file (199,523 rows). Integer columns as they are;
    categorical columns as integer category codes (one-hot would give ~500
    columns); the instance weight (col 24) is dropped. Sensitive: sex
    (col 12, default) or race (col 10). y = income 50000+.
``communities_crime``
    1,994 communities; identifiers (state, county, community, name,
    fold) and every column with missing values dropped. Sensitive:
    racepctblack ≥ 0.5 (the FKR-F²E paper's "minority"; 244 rows, 243 in
    the authors' file of 1,993). y = ViolentCrimesPerPop (continuous).
``compas``
    compas-scores-two-years.csv (7,214 rows). X: age, priors_count,
    juv_fel/misd/other_count, charge degree (felony = 1), and the other
    attribute one-hot (sex when race is sensitive, race when sex is).
    Sensitive: race (default, 6 groups) or sex. y = two_year_recid.
``credit_default``
    UCI_Credit_Card.csv (30,000 rows); ID dropped; the label is the last
    column. Sensitive: EDUCATION (default, its 7 codes) or SEX.
``ffe_credit``
    the FKR-F²E authors' 20,000 × 24 file: col 2 (binarised education) is
    the sensitive attribute, col 23 the label, X = the other 22 columns.
    ``splits``: their 50 training index arrays of 15,000 rows (0-based), as
    published — they were drawn with replacement, so each repeats about 40
    rows (14,950–14,970 distinct).
``ffe_crime``
    their 1,993 × 102 file: col 0 (minority) sensitive, col 101 the
    binarised crime rate, X = cols 1–99. Col 100 is dropped: it is the
    continuous crime rate itself (the label equals col 100 ≥ 0.5 on every
    row), a target leak in the published file. Their index file holds 50
    permutations of the rows (1-based); the training set of a trial is the
    first 1,495 rows (75 %, the paper's split ratio) of its permutation.
``ffe_compas``
    compas/compas.csv inside compas.zip (16,000 × 16): col 15 is the label
    (minority rate 0.228 as the data README states), col 14 is taken as
    race (64 / 36 %; col 0, 82 / 18 %, is sex) — inferred, not documented
    by the authors. X = cols 0–13. Index: 50 permutations (1-based);
    training = first 12,000 (75 %). Col 15 is the only column whose rate
    matches the paper's constant error; no model beats the constant predictor
    on it (docs/findings.md F1.2).
``safairkm_adult``
    / ``safairkm_bank`` the SAfairKM authors' arrays: X = X_org,
    sensitive = demograph, y = None. See :func:`preprocess_safairkm`.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
import pandas as pd

from .._random import GEN_BLOCK, as_seed_sequence, child_rng
from .errors import DataIntegrityError, DataUnavailableError
from .fetch import fetch_file, matches
from .fetch import sha256_of as _sha256
from .sources import SOURCES, files_of

__all__ = [
    "DATASETS",
    "FCE_POOLS",
    "FCE_POOL_NAMES",
    "Dataset",
    "cache_dir",
    "data_dir",
    "fetch_data",
    "is_cache",
    "list_datasets",
    "load_dataset",
    "load_fce_pool",
    "load_mnist_usps",
    "make_fair_blobs",
    "make_fair_regression",
    "minmax_scale",
    "preprocess_safairkm",
    "verify_data",
]

DATASETS = ("adult", "bank_marketing", "compas", "credit_default", "communities_crime",
            "census_income_kdd", "ffe_credit", "ffe_crime", "ffe_compas", "safairkm_adult",
            "safairkm_bank")
FCE_POOLS = ("ds", "har", "mnist_usps", "reverse_mnist", "jaffe", "yale")
FCE_POOL_NAMES = {"ds": "D&S", "har": "HAR", "mnist_usps": "MNIST-USPS",
                  "reverse_mnist": "Reverse MNIST", "jaffe": "JAFFE", "yale": "Yale"}




@dataclass(frozen=True)
class Dataset:
    """A loaded data set (see the module docstring for each encoding).

    Made by :func:`load_dataset`.

    Parameters
    ----------
    name : str
        The data set's name, as :func:`load_dataset` takes it.
    X : ndarray of shape (n_samples, n_features)
        The features, float64 and finite; never the sensitive attribute or the label.
    y : ndarray of shape (n_samples,) or None
        The label (None for a set without one).
    sensitive : ndarray of shape (n_samples,)
        The sensitive attribute as integer codes into ``groups``.
    groups : ndarray
        The names of the groups.
    sensitive_name : str
        Which attribute is the sensitive one.
    feature_names : list of str
        A name for every column of ``X``.
    splits : list of ndarray or None
        The authors' training index arrays, for the sets that come with them.
    description : str
        Where the data come from and how they are encoded.
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


# -- files -----------------------------------------------------------------------------------

def data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The data directory.

    ``path``, else ``DASKFAIR_DATA``, else the dask config key ``daskfair.data-dir``, else
    ``../shared/data`` from the working directory or above the package (a development
    checkout), else the user's cache folder (:func:`cache_dir`, created). A folder that holds
    a ``SHA256SUMS`` file is a copy kept by hand: it is used as it is, and a missing file is an
    error. Any other folder is a cache: a missing file is downloaded into it on first use and
    checked against :mod:`daskfair.datasets.sources` (:mod:`daskfair.datasets.fetch`).

    Parameters
    ----------
    path : path-like, optional
        The folder to use; overrides everything else.

    Returns
    -------
    pathlib.Path
        The data directory.
    """
    if path is not None:
        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"data directory {p} does not exist.")
        return p
    for name, value in (("DASKFAIR_DATA", os.environ.get("DASKFAIR_DATA")),
                        ("daskfair.data-dir", dask.config.get("daskfair.data-dir", None))):
        if value:
            if not Path(value).is_dir():
                raise FileNotFoundError(
                    f"the data directory {value} ({name}) does not exist: create it (an empty "
                    "folder is filled on first use) or unset it.")
            return Path(value)
    candidates = [Path.cwd().parent / "shared" / "data"]
    candidates += [parent / "shared" / "data" for parent in Path(__file__).resolve().parents]
    for c in candidates:
        if c.is_dir():
            return c
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def cache_dir() -> Path:
    """The user's cache folder for data sets (the platform's convention).

    Returns
    -------
    pathlib.Path
        ``~/.cache/daskfair/data`` on Linux (under an absolute ``XDG_CACHE_HOME`` if set),
        the platform's cache folder elsewhere; not created here.
    """
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "daskfair" / "Cache" / "data"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "daskfair" / "data"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # XDG: relative ignored
    return base / "daskfair" / "data"


def is_cache(root: Path) -> bool:
    """Whether missing files are downloaded into ``root``.

    A folder without ``SHA256SUMS`` is a cache; one with it is kept by hand.

    Parameters
    ----------
    root : pathlib.Path
        The data directory.

    Returns
    -------
    bool
        True for a cache.
    """
    return not (root / "SHA256SUMS").exists()


_VERIFIED: set[tuple[str, int, int]] = set()
_WARNED: set[str] = set()


def _checksums(root: Path) -> dict[str, str] | None:
    sums = root / "SHA256SUMS"
    if not sums.exists():
        return None
    out = {}
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            out[name.strip().removeprefix("./")] = digest
    return out


def _stat_key(path: Path) -> tuple[str, int, int]:
    """What a verification is remembered by: the file, its size and modification time."""
    stat = path.stat()
    return str(path.resolve()), stat.st_size, int(stat.st_mtime)


def _file(root: Path, rel: str) -> Path:
    """Path of ``rel`` under ``root`` (downloaded first into a cache), checked once per
    process against its SHA-256."""
    path = root / rel
    if not path.exists():
        if not is_cache(root):
            raise FileNotFoundError(
                f"data file {rel} is missing from the data directory {root}, which holds a "
                "SHA256SUMS and is used as it is. Put the file there, or point DASKFAIR_DATA "
                "(or data_dir=) at another folder: an empty one is filled on first use.")
        fetch_file(rel, root)
        _VERIFIED.add(_stat_key(path))  # fetch_file checked it against the registry
        return path
    key = _stat_key(path)
    if key in _VERIFIED:
        return path
    sums = _checksums(root)
    src = SOURCES.get(rel)
    expected = sums.get(rel) if sums is not None else None if src is None else src.sha256
    if expected is None:
        if rel not in _WARNED:
            _WARNED.add(rel)
            warnings.warn(f"{rel} has no checksum in {root / 'SHA256SUMS'}; loading it "
                          "unverified.", UserWarning, stacklevel=3)
        return path
    actual = _sha256(path)
    # a cache is checked against the registry (which knows a publisher's other gzip)
    ok = actual == expected if sums is not None else matches(src, path, actual)
    if not ok:
        raise DataIntegrityError(
            f"{path} is corrupt or modified: SHA-256 {actual}, expected {expected}. "
            + ("Delete it: it is downloaded again on first use." if sums is None
               else "Replace it with the original file.")
        )
    _VERIFIED.add(key)
    return path


def verify_data(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Check every file of the data directory's SHA256SUMS (a cache: of daskfair's registry).

    Nothing is downloaded.

    Parameters
    ----------
    path : path-like, optional
        The data directory (default: :func:`data_dir`'s choice).

    Returns
    -------
    dict of str to str
        ``{relative path: "ok" | "missing" | "corrupt"}``.
    """
    root = data_dir(path)
    sums = _checksums(root)
    status = {}
    for rel in sums if sums is not None else SOURCES:
        p = root / rel
        if not p.exists():
            status[rel] = "missing"
            continue
        good = _sha256(p) == sums[rel] if sums is not None else matches(SOURCES[rel], p)
        status[rel] = "ok" if good else "corrupt"
    return status


def fetch_data(name: str = "all", path: str | os.PathLike[str] | None = None, *,
               progress: bool | None = None) -> list[Path]:
    """Download the files of data set ``name`` into the data directory if they are missing.

    Every file is tried: when some cannot be downloaded (no public source, no network), the
    others are still fetched and one error lists them all at the end.

    Parameters
    ----------
    name : str
        A data set, a pool name, or ``"all"``.
    path : path-like, optional
        The data directory (default: :func:`data_dir`'s choice).
    progress : bool, optional
        Show download progress (default: on a terminal).

    Returns
    -------
    list of pathlib.Path
        The files' paths, each checked.
    """
    root = data_dir(path)
    files = files_of(name)
    missing = [rel for rel in files if not (root / rel).exists()]
    if missing and not is_cache(root):
        raise FileNotFoundError(
            f"{root} holds a SHA256SUMS and is used as it is; nothing is downloaded into it. "
            "Point DASKFAIR_DATA (or --data-dir) at another folder to download into.")
    failed = []
    for rel in missing:
        try:
            fetch_file(rel, root, progress=progress)
        except (DataUnavailableError, DataIntegrityError) as exc:
            failed.append(f"{rel}: {exc}")
    if failed:
        raise DataUnavailableError(
            f"{len(failed)} of {len(files)} files could not be downloaded (the others are "
            "in place):\n  " + "\n  ".join(failed))
    return [_file(root, rel) for rel in files]


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`.

    Returns
    -------
    list of str
        The names.

    Examples
    --------
    >>> from daskfair.datasets import list_datasets
    >>> "adult" in list_datasets()
    True
    """
    return list(DATASETS)


# -- helpers ---------------------------------------------------------------------------------

def _encode(values: Any) -> tuple[np.ndarray, np.ndarray]:
    groups, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.astype(np.int64), groups


def _frame_to_X(df: pd.DataFrame, categorical: list[str]) -> tuple[np.ndarray, list[str]]:
    df = df.copy()
    for col in categorical:
        df[col] = df[col].astype("string").fillna("missing").str.strip()
    out = pd.get_dummies(df, columns=categorical, prefix_sep="=", dtype=np.float64)
    return out.to_numpy(dtype=np.float64), [str(c) for c in out.columns]


def _choose(name: str, sensitive: str | None, options: dict[str, Any]) -> str:
    key = next(iter(options)) if sensitive is None else sensitive
    if key not in options:
        raise ValueError(
            f"sensitive={sensitive!r} is not available for {name!r}; choose one of "
            f"{list(options)}."
        )
    return key


def _make(name: str, X: np.ndarray, y: Any, s_values: Any, s_name: str,
          features: list[str], description: str, splits: list[np.ndarray] | None = None
          ) -> Dataset:
    codes, groups = _encode(s_values)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if not np.isfinite(X).all():  # pragma: no cover - guarded by each loader's encoding
        raise ValueError(f"{name}: the encoded features are not finite.")
    return Dataset(name=name, X=X, y=None if y is None else np.asarray(y), sensitive=codes,
                   groups=groups, sensitive_name=s_name, feature_names=features,
                   splits=splits, description=description)


# -- loaders ---------------------------------------------------------------------------------

_ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
               "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
               "hours-per-week", "native-country", "income"]


def _adult(root: Path, sensitive: str | None) -> Dataset:
    s_col = _choose("adult", sensitive, {"sex": 0, "race": 0})
    df = pd.read_csv(_file(root, "adult/adult.data"), header=None, names=_ADULT_COLS,
                     skipinitialspace=True, na_values="?")
    y = (df.pop("income").str.strip() == ">50K").astype(np.int64).to_numpy()
    s = df.pop(s_col).str.strip()
    cats = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    X, names = _frame_to_X(df, cats)
    return _make("adult", X, y, s, s_col, names, "UCI Adult (adult.data), one-hot categoricals")


def _bank(root: Path, sensitive: str | None) -> Dataset:
    _choose("bank_marketing", sensitive, {"marital": 0})
    df = pd.read_csv(_file(root, "bank_marketing/bank-additional-full.csv"), sep=";")
    df = df[df["marital"] != "unknown"].reset_index(drop=True)
    y = (df.pop("y") == "yes").astype(np.int64).to_numpy()
    s = df.pop("marital")
    df = df.drop(columns=["duration"])
    cats = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    X, names = _frame_to_X(df, cats)
    return _make("bank_marketing", X, y, s, "marital", names,
                 "UCI Bank Marketing without marital 'unknown', duration dropped")


def _census(root: Path, sensitive: str | None) -> Dataset:
    s_col = {"sex": 12, "race": 10}[_choose("census_income_kdd", sensitive,
                                            {"sex": 12, "race": 10})]
    df = pd.read_csv(_file(root, "census_income_kdd/census_income_1994_1995_train.csv.gz"),
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
    return _make("census_income_kdd", np.column_stack(cols), y, s,
                 {12: "sex", 10: "race"}[s_col], names,
                 "UCI Census-Income (KDD) train, categoricals as codes, weight dropped")


def _communities(root: Path, sensitive: str | None) -> Dataset:
    _choose("communities_crime", sensitive, {"racepctblack": 0})
    names_file = _file(root, "communities_crime/communities.names").read_text(errors="ignore")
    attrs = [line.split()[1] for line in names_file.splitlines()
             if line.startswith("@attribute")]
    df = pd.read_csv(_file(root, "communities_crime/communities.data"), header=None,
                     na_values="?", names=attrs)
    y = df.pop("ViolentCrimesPerPop").to_numpy(dtype=np.float64)
    s = (df.pop("racepctblack") >= 0.5).astype(np.int64)
    df = df.drop(columns=["state", "county", "community", "communityname", "fold"])
    df = df.loc[:, df.notna().all()]
    return _make("communities_crime", df.to_numpy(np.float64), y, s, "racepctblack>=0.5",
                 list(df.columns), "UCI Communities and Crime, complete columns only")


def _compas(root: Path, sensitive: str | None) -> Dataset:
    s_col = _choose("compas", sensitive, {"race": 0, "sex": 0})
    df = pd.read_csv(_file(root, "compas/compas-scores-two-years.csv"))
    other = "sex" if s_col == "race" else "race"
    base = df[["age", "priors_count", "juv_fel_count", "juv_misd_count",
               "juv_other_count"]].astype(np.float64)
    base["charge_felony"] = (df["c_charge_degree"] == "F").astype(np.float64)
    dummies = pd.get_dummies(df[other], prefix=other, prefix_sep="=", dtype=np.float64)
    feats = pd.concat([base, dummies], axis=1)
    return _make("compas", feats.to_numpy(np.float64), df["two_year_recid"].to_numpy(np.int64),
                 df[s_col], s_col, list(feats.columns),
                 "ProPublica COMPAS two-year recidivism")


def _credit(root: Path, sensitive: str | None) -> Dataset:
    s_col = _choose("credit_default", sensitive, {"EDUCATION": 0, "SEX": 0})
    df = pd.read_csv(_file(root, "credit_default/UCI_Credit_Card.csv"))
    y = df.iloc[:, -1].to_numpy(np.int64)
    df = df.iloc[:, :-1].drop(columns=["ID"])
    s = df.pop(s_col)
    return _make("credit_default", df.to_numpy(np.float64), y, s, s_col, list(df.columns),
                 "UCI Default of Credit Card Clients")


def _permutation_splits(index: np.ndarray, n_train: int) -> list[np.ndarray]:
    return [np.sort(index[:n_train, t] - 1).astype(np.int64) for t in range(index.shape[1])]


def _ffe_credit(root: Path, sensitive: str | None) -> Dataset:
    _choose("ffe_credit", sensitive, {"education": 0})
    df = pd.read_csv(_file(root, "ffe_splits/creditcarddefault/creditcarddefault.csv"),
                     header=None).astype(np.float64)
    idx = pd.read_csv(_file(root, "ffe_splits/creditcarddefault/creditdefault_index.csv"),
                      header=None).to_numpy(np.int64)
    X = df.drop(columns=[2, 23])
    return _make("ffe_credit", X.to_numpy(), df[23].to_numpy(np.int64), df[2].astype(int),
                 "education (binarised)", [f"col{c}" for c in X.columns],
                 "FKR-F²E authors' Credit Default (20,000 rows)",
                 [np.sort(row) for row in idx])


def _ffe_crime(root: Path, sensitive: str | None) -> Dataset:
    _choose("ffe_crime", sensitive, {"minority": 0})
    df = pd.read_csv(_file(root, "ffe_splits/communitycrime/crimecommunity.csv"), header=None)
    idx = pd.read_csv(_file(root, "ffe_splits/communitycrime/crimecommunity_index.csv"),
                      header=None).to_numpy(np.int64)
    X = df.iloc[:, 1:100]  # col 100 is the target before binarisation (a leak): dropped
    return _make("ffe_crime", X.to_numpy(np.float64), df[101].to_numpy(np.int64),
                 df[0].astype(int), "minority", [f"col{c}" for c in X.columns],
                 "FKR-F²E authors' Communities and Crime (1,993 rows)",
                 _permutation_splits(idx, round(0.75 * len(df))))


def _ffe_compas(root: Path, sensitive: str | None) -> Dataset:
    _choose("ffe_compas", sensitive, {"race": 0})
    with zipfile.ZipFile(_file(root, "ffe_splits/compas/compas.zip")) as z:
        df = pd.read_csv(io.BytesIO(z.read("compas/compas.csv")), header=None)
        idx = pd.read_csv(io.BytesIO(z.read("compas/compas_index.csv")),
                          header=None).to_numpy(np.int64)
    X = df.iloc[:, :14]
    return _make("ffe_compas", X.to_numpy(np.float64), df[15].to_numpy(np.int64),
                 df[14].astype(int), "race (inferred: col 14)", [f"col{c}" for c in X.columns],
                 "FKR-F²E authors' COMPAS (16,000 rows, 2019 file)",
                 _permutation_splits(idx, round(0.75 * len(df))))


def _safairkm(which: str) -> Callable[[Path, str | None], Dataset]:
    def load(root: Path, sensitive: str | None) -> Dataset:
        _choose(f"safairkm_{which.lower()}", sensitive, {"demograph": 0})
        with np.load(_file(root, f"safairkm/{which}.npz")) as z:
            X, s = z["X_org"].astype(np.float64), z["demograph"]
        return _make(f"safairkm_{which.lower()}", X, None, s, "demograph",
                     [f"x{i}" for i in range(X.shape[1])],
                     f"SAfairKM authors' {which} arrays (X_org, demograph)")
    return load


_LOADERS: dict[str, Callable[[Path, str | None], Dataset]] = {
    "adult": _adult, "bank_marketing": _bank, "census_income_kdd": _census,
    "communities_crime": _communities, "compas": _compas, "credit_default": _credit,
    "ffe_credit": _ffe_credit, "ffe_crime": _ffe_crime, "ffe_compas": _ffe_compas,
    "safairkm_adult": _safairkm("Adult"), "safairkm_bank": _safairkm("Bank"),
}


def load_dataset(
    name: str, data_dir: str | os.PathLike[str] | None = None, *, sensitive: str | None = None
) -> Dataset:
    """Load a real data set by name (see the module docstring for the encodings).

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    data_dir : path-like, optional
        Data directory (default: DASKFAIR_DATA, else ../shared/data).
    sensitive : str, optional
        Which attribute is the sensitive one, where a data set offers a choice.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> from daskfair import load_dataset
    >>> adult = load_dataset("adult")
    >>> adult.X.shape[0], adult.sensitive_name, list(adult.groups)
    (32561, 'sex', ['Female', 'Male'])
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown data set {name!r}; choose one of {list(DATASETS)}.")
    return _LOADERS[name](globals()["data_dir"](data_dir), sensitive)


def standard_scale(X: Any) -> Any:
    """Z-score every column (constant columns become 0); a dask array stays lazy, its moments
    computed once, here."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    if isinstance(X, da.Array):
        mean, std = da.compute(mean, std)
    return (X - mean) / np.where(std > 0, std, 1.0)


def minmax_scale(X: Any, train: np.ndarray) -> Any:
    """Scale every column to [0, 1] on the training rows' range (constant columns become 0).

    numpy in, numpy out; a dask array stays lazy (its bounds are computed once, here).
    """
    lo, hi = X[train].min(axis=0), X[train].max(axis=0)
    if isinstance(X, da.Array):
        lo, hi = da.compute(lo, hi)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span


def preprocess_safairkm(
    X: np.ndarray, sensitive: np.ndarray, n_samples: int | None = 5000, seed: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The SAfairKM authors' preprocessing: z-score columns, L2-normalise rows, subsample.

    The subsample is ``n_samples`` rows drawn without replacement by
    ``numpy.random.default_rng(seed)`` (sorted); the authors' exact rows cannot be reproduced
    without their code. ``n_samples=None`` keeps every row.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The features.
    sensitive : ndarray of shape (n_samples,)
        The groups.
    n_samples : int or None
        Rows to keep.
    seed : int
        Seeds the subsample.

    Returns
    -------
    X : ndarray of shape (n_kept, n_features)
        The preprocessed rows.
    sensitive : ndarray of shape (n_kept,)
        Their groups.
    """
    Z = standard_scale(np.asarray(X, dtype=np.float64))
    Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-300)
    if n_samples is None or n_samples >= len(Z):
        return Z, np.asarray(sensitive)
    rows = np.sort(np.random.default_rng(seed).choice(len(Z), n_samples, replace=False))
    return Z[rows], np.asarray(sensitive)[rows]


def load_fce_pool(
    name: str, data_dir: str | os.PathLike[str] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One of the FCE authors' base-clustering pools.

    Parameters
    ----------
    name : str
        The pool: ``"ds"`` (D&S), ``"har"``, ``"mnist_usps"``, ``"reverse_mnist"``,
        ``"jaffe"`` or ``"yale"``.
    data_dir : path-like, optional
        The data folder (default: :func:`data_dir`'s choice).

    Returns
    -------
    base_labels : ndarray of shape (n_samples, 100), int64
        Cluster index of every row in every base clustering (argmax of the one-hot matrices).
    y : ndarray of shape (n_samples,), int64
        True classes, 0-based.
    groups : ndarray of shape (n_samples,), int64
        Protected group, 0-based.

    Examples
    --------
    >>> from daskfair import load_fce_pool
    >>> base, y, groups = load_fce_pool("har")
    >>> base.shape, len(set(y)), len(set(groups))
    ((10299, 100), 6, 30)
    """
    import scipy.io

    if name not in FCE_POOLS:
        raise ValueError(f"unknown FCE pool {name!r}; choose one of {list(FCE_POOLS)}.")
    rel = f"fce_pools/bc_pool_{name}.mat"
    path = _file(globals()["data_dir"](data_dir), rel)
    try:
        mat = scipy.io.loadmat(path)
        cells, y, g = mat["bac_Y"], mat["y"].ravel(), mat["g"].ravel()
    except Exception as exc:
        raise ValueError(f"{path} is corrupt or not an FCE pool ({exc}).") from exc
    n = y.size
    columns = []
    for j in range(cells.size):
        onehot = np.asarray(cells.flat[j])
        if onehot.ndim != 2 or onehot.shape[0] != n or not (onehot.sum(axis=1) == 1).all():
            raise ValueError(f"{path}: base clustering {j} is not an n × c one-hot matrix; "
                             "the file is corrupt or not an FCE pool.")
        columns.append(onehot.argmax(axis=1))
    return (np.column_stack(columns).astype(np.int64), _encode(y)[0], _encode(g)[0])


def load_mnist_usps(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    n_mnist: int = 2000,
    n_usps: int = 1800,
    seed: int = 0,
) -> Dataset:
    """MNIST-USPS as in the FCE paper: MNIST digits resized to 16 × 16 plus USPS digits.

    ``n_mnist`` digits of the MNIST test set (resized by linear interpolation, scaled to
    [-1, 1] like USPS) and ``n_usps`` of the USPS training set, drawn with ``seed``;
    group = source (0 MNIST, 1 USPS), y = digit.

    Parameters
    ----------
    data_dir : path-like, optional
        The data folder (default: :func:`data_dir`'s choice).
    n_mnist, n_usps : int
        Digits drawn from each source.
    seed : int
        Seeds the draw.

    Returns
    -------
    Dataset
        The digits, their sources as groups and their values as labels.
    """
    from scipy.ndimage import zoom

    root = globals()["data_dir"](data_dir)
    with gzip.open(_file(root, "mnist/t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(_file(root, "mnist/t10k-labels-idx1-ubyte.gz")) as f:
        digits = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    usps = pd.read_csv(_file(root, "usps/zip.train.gz"), sep=r"\s+", header=None).to_numpy()
    rng = np.random.default_rng(seed)
    pick_m = np.sort(rng.choice(len(images), n_mnist, replace=False))
    pick_u = np.sort(rng.choice(len(usps), n_usps, replace=False))
    small = np.stack([zoom(im.astype(np.float64), 16 / 28, order=1) for im in images[pick_m]])
    mnist = small.reshape(n_mnist, 256) / 255.0 * 2.0 - 1.0
    X = np.vstack([mnist, usps[pick_u, 1:]])
    y = np.concatenate([digits[pick_m], usps[pick_u, 0].astype(np.int64)])
    s = np.repeat([0, 1], [n_mnist, n_usps])
    return _make("mnist_usps", X, y, s, "source", [f"px{i}" for i in range(256)],
                 "MNIST test digits resized to 16 × 16 + USPS training digits")


# -- synthetic data, any size ---------------------------------------------------------------

def _chunks(n: int, chunks: int | None, width: int) -> int:
    if chunks is None:
        return int(min(n, max(1_000, 2**24 // max(width, 1))))
    if chunks < 1:
        raise ValueError(f"chunks must be a positive number of rows, got {chunks}.")
    return int(chunks)


def _generated(n: int, width: int, chunks: int | None, seed: np.random.SeedSequence,
               block_fn: Callable[[np.random.Generator, int], np.ndarray]) -> da.Array:
    """A lazy (n, width) float64 array whose rows come from fixed generation blocks.

    Generation block b holds rows [b·GEN_BLOCK, (b+1)·GEN_BLOCK) and is drawn from
    ``child_rng(seed, 1, b)``; an output chunk generates the blocks it overlaps and slices
    them, so the values never depend on ``chunks``.
    """
    step = _chunks(n, chunks, width)

    def make(block: np.ndarray) -> np.ndarray:
        start, stop = int(block[0]), int(block[-1]) + 1
        b0, b1 = start // GEN_BLOCK, (stop - 1) // GEN_BLOCK
        parts = [block_fn(child_rng(seed, 1, b), min(GEN_BLOCK, n - b * GEN_BLOCK))
                 for b in range(b0, b1 + 1)]
        rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
        return rows[start - b0 * GEN_BLOCK: stop - b0 * GEN_BLOCK]

    index = da.arange(n, chunks=step)
    return index.map_blocks(make, dtype=np.float64, new_axis=1, chunks=(index.chunks[0], (width,)))


def _weights(weights: Any, k: int, what: str) -> np.ndarray:
    if weights is None:
        return np.full(k, 1.0 / k)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k,) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"{what} must be {k} non-negative numbers summing to 1, got {weights}.")
    return w


def make_fair_blobs(
    n_samples: int,
    n_features: int = 2,
    n_clusters: int = 3,
    n_groups: int = 2,
    *,
    group_weights: Any = None,
    group_bias: float = 0.6,
    cluster_std: float = 1.0,
    center_box: tuple[float, float] = (-10.0, 10.0),
    chunks: int | None = None,
    random_state: Any = None,
) -> tuple[da.Array, da.Array, da.Array]:
    """Gaussian blobs whose clusters over-represent one group each: plain k-means is unfair.

    Generative model: centers μ_k uniform in ``center_box`` (drawn once from the seed); each
    row draws its cluster k uniformly, its group from
    p(g | k) = (1 − bias)·w_g + bias·[g = k mod J] (w = ``group_weights``), and
    x = μ_k + ``cluster_std``·ε, ε ~ N(0, I). Rows are drawn in fixed blocks, so the values
    do not depend on ``chunks``.

    Parameters
    ----------
    n_samples : int
        Rows.
    n_features : int
        Columns of X.
    n_clusters : int
        Blobs.
    n_groups : int
        Groups J.
    group_weights : array-like of shape (n_groups,), optional
        w, the groups' overall shares (default: equal).
    group_bias : float
        How strongly each blob over-represents its group, in [0, 1].
    cluster_std : float
        The blobs' standard deviation.
    center_box : (float, float)
        The box the centers are drawn in.
    chunks : int, optional
        Rows per block of the dask arrays.
    random_state : int, SeedSequence or None
        Seeds everything.

    Returns
    -------
    X : dask array of shape (n_samples, n_features), float64
    sensitive : dask array of shape (n_samples,), int64
    true_labels : dask array of shape (n_samples,), int64

    Examples
    --------
    >>> from daskfair import make_fair_blobs
    >>> X, s, labels = make_fair_blobs(1000, n_features=3, random_state=0)
    >>> X.shape, s.shape, labels.shape
    ((1000, 3), (1000,), (1000,))
    """
    if n_samples < 1 or n_features < 1 or n_clusters < 1:
        raise ValueError("n_samples, n_features and n_clusters must be >= 1.")
    if n_groups < 2:
        raise ValueError(f"n_groups must be >= 2 for fairness, got {n_groups}.")
    if not 0 <= group_bias <= 1:
        raise ValueError(f"group_bias must lie in [0, 1], got {group_bias}.")
    w = _weights(group_weights, n_groups, "group_weights")
    seed = as_seed_sequence(random_state)
    centers = child_rng(seed, 0).uniform(*center_box, size=(n_clusters, n_features))
    probs = (1 - group_bias) * w[None, :] + group_bias * np.eye(n_groups)[
        np.arange(n_clusters) % n_groups]

    def block(rng: np.random.Generator, m: int) -> np.ndarray:
        k = rng.integers(0, n_clusters, m)
        u = rng.random(m)
        g = (u[:, None] > np.cumsum(probs[k], axis=1)).sum(axis=1)
        x = centers[k] + cluster_std * rng.standard_normal((m, n_features))
        return np.column_stack([x, np.minimum(g, n_groups - 1), k])

    data = _generated(n_samples, n_features + 2, chunks, seed, block)
    return (data[:, :n_features], data[:, n_features].astype(np.int64),
            data[:, n_features + 1].astype(np.int64))


def make_fair_regression(
    n_samples: int,
    n_features: int = 20,
    *,
    n_groups: int = 2,
    group_weights: Any = None,
    group_shift: float = 0.5,
    group_effect: float = 1.0,
    noise: float = 0.5,
    chunks: int | None = None,
    random_state: Any = None,
) -> tuple[da.Array, da.Array, da.Array]:
    """Regression data in which the group is predictable from X and moves y.

    Generative model: group g ~ ``group_weights``; x = ``group_shift``·g·1 + ε, ε ~ N(0, I);
    y = xᵀw + ``group_effect``·g + ``noise``·η with w ~ N(0, I/d) drawn once from the seed.
    Rows are drawn in fixed blocks, so the values do not depend on ``chunks``.

    Parameters
    ----------
    n_samples : int
        Rows.
    n_features : int
        Columns of X (d).
    n_groups : int
        Groups.
    group_weights : array-like of shape (n_groups,), optional
        The groups' shares (default: equal).
    group_shift : float
        How far each group's features are shifted.
    group_effect : float
        How much the group moves y.
    noise : float
        The standard deviation of y's noise.
    chunks : int, optional
        Rows per block of the dask arrays.
    random_state : int, SeedSequence or None
        Seeds everything.

    Returns
    -------
    X : dask array of shape (n_samples, n_features), float64
    y : dask array of shape (n_samples,), float64
    sensitive : dask array of shape (n_samples,), int64

    Examples
    --------
    >>> from daskfair import make_fair_regression
    >>> X, y, s = make_fair_regression(1000, n_features=5, random_state=0)
    >>> X.shape, y.shape, s.shape
    ((1000, 5), (1000,), (1000,))
    """
    if n_samples < 1 or n_features < 1:
        raise ValueError("n_samples and n_features must be >= 1.")
    if n_groups < 2:
        raise ValueError(f"n_groups must be >= 2 for fairness, got {n_groups}.")
    w_groups = _weights(group_weights, n_groups, "group_weights")
    seed = as_seed_sequence(random_state)
    coef = child_rng(seed, 0).standard_normal(n_features) / np.sqrt(n_features)

    def block(rng: np.random.Generator, m: int) -> np.ndarray:
        g = rng.choice(n_groups, size=m, p=w_groups)
        x = group_shift * g[:, None] + rng.standard_normal((m, n_features))
        y = x @ coef + group_effect * g + noise * rng.standard_normal(m)
        return np.column_stack([x, y, g])

    data = _generated(n_samples, n_features + 2, chunks, seed, block)
    return (data[:, :n_features], data[:, n_features],
            data[:, n_features + 1].astype(np.int64))
