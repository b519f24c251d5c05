"""Tables as users keep them (issue 22): Parquet directories, CSV globs and dask DataFrames
give what the same table in pandas gives; the one-hot columns are pandas' get_dummies; the
table is read by the passes the docs name and never on the client."""

import itertools
import threading

import dask
import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

from daskfair import FairKernelClassifierCV, FairKernelRegressor
from daskfair.cli.inputs import load_input, table_data
from daskfair.metrics import clustering_report, demographic_parity_difference, error_rate
from daskfair.tables import MISSING, TableEncoder, read_table


def _table(n=900, seed=0):
    rng = np.random.default_rng(seed)
    purpose = rng.choice(["car", "tv", "education", "boat"], n, p=[.4, .3, .2, .1])
    df = pd.DataFrame({
        "age": rng.integers(19, 75, n).astype(float), "income": rng.lognormal(10, 1, n),
        "purpose": purpose, "housing": rng.choice(["own", "rent", "free"], n),
        "sex": rng.choice(["female", "male"], n),
        "risk": np.where(rng.random(n) < 0.3 + 0.3 * (purpose == "car"), "bad", "good")})
    df.loc[rng.choice(n, 40, replace=False), "housing"] = None  # a level of its own
    return df


def _dummies(df, text):
    """pandas' get_dummies with the missing level named as daskfair names it."""
    out = pd.get_dummies(df, columns=text, prefix_sep="=", dtype=np.float64, dummy_na=True)
    out = out.rename(columns={f"{c}=nan": f"{c}={MISSING}" for c in text})
    keep = [c for c in out.columns if not (c.endswith(f"={MISSING}") and out[c].sum() == 0)]
    return out[keep]


def _uneven(df, cuts=(0, 97, 97, 98, 400, 401, 900)):
    """A dask DataFrame of partitions of unequal length: one empty, two of a single row."""
    parts = [df.iloc[a:b] for a, b in itertools.pairwise(cuts)]
    return dd.from_map(lambda i: parts[i].reset_index(drop=True), range(len(parts)),
                       meta=df.iloc[:0].reset_index(drop=True))


def test_the_one_hot_columns_are_get_dummies_for_pandas_and_dask():
    df = _table()[["age", "purpose", "housing", "income"]]
    want = _dummies(df, ["purpose", "housing"])
    for X in (df, _uneven(df)):
        enc = TableEncoder()
        out = enc.fit_transform(X)
        assert list(enc.get_feature_names_out()) == list(want.columns)
        got = out.compute() if isinstance(out, da.Array) else out
        np.testing.assert_array_equal(got, want.to_numpy())
        assert got.dtype == np.float64
    # the fit pass's lengths give the chunks: no second pass to count rows
    assert _uneven(df).pipe(TableEncoder().fit_transform).chunks[0] == (97, 1, 302, 1, 499)
    assert enc.levels_["housing"] == ["free", "own", "rent", MISSING]


def test_numeric_missing_values_are_an_error_or_an_indicator():
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan], "t": ["x", "y", "x", "y"]})
    with pytest.raises(ValueError,
                       match=r"missing values \{'a': 2\}.*numeric_missing='indicator'"):
        TableEncoder().fit(df)
    enc = TableEncoder(numeric_missing="indicator").fit(df)
    assert list(enc.get_feature_names_out()) == ["a", "a=<missing>", "t=x", "t=y"]
    # a missing number takes the column's smallest value (1 here), inside the data's range
    np.testing.assert_array_equal(enc.transform(df), [[1, 0, 1, 0], [1, 1, 0, 1],
                                                      [3, 0, 1, 0], [1, 1, 0, 1]])
    assert TableEncoder.from_dict(enc.to_dict()).fill_ == {"a": 1.0}
    # new rows with missing or infinite numbers where the fitted rows had none: an error
    fitted = TableEncoder().fit(df.fillna(2.0))
    for bad, says in ((np.nan, r"missing values \{'a': 1\}"), (np.inf, r"infinite values")):
        with pytest.raises(ValueError, match=says + r".*fitted without them"):
            fitted.transform(df.fillna(2.0).assign(a=[1.0, bad, 3.0, 2.0]))
    with pytest.raises(ValueError, match=r"dates or durations \{'d': 'datetime64"):
        TableEncoder().fit(df.assign(d=pd.Timestamp("2020-01-01")))


def test_an_unseen_level_is_an_all_zero_row_with_a_warning_and_the_dict_round_trips():
    df = _table(200)[["purpose", "age"]]
    enc = TableEncoder().fit(df)
    again = TableEncoder.from_dict(enc.to_dict())
    new = pd.DataFrame({"purpose": ["plane", "tv"], "age": [30.0, 40.0]})
    for e in (enc, again):
        with pytest.warns(UserWarning, match=r"not seen .*\{'purpose': 1\}"):
            X = e.transform(new)
        np.testing.assert_array_equal(X, [[30, 0, 0, 0, 0], [40, 0, 0, 0, 1]])
    np.testing.assert_array_equal(again.transform(df), enc.transform(df))


def test_a_column_with_too_many_levels_is_refused_by_name():
    n = 100_000
    df = pd.DataFrame({"id": [f"c{i}" for i in range(n)], "x": np.arange(n, dtype=float)})
    for X, seen in ((df, "100,000"), (dd.from_pandas(df, npartitions=4), "25,000")):
        with pytest.raises(ValueError, match=rf"more than max_levels=1,000 distinct values: 'id' "
                                             rf"\(at least {seen}\).*ID or free text"):
            TableEncoder().fit(X)
    with pytest.raises(TypeError, match=r"column 'm' mixes text and other values \(int, str\)"):
        TableEncoder().fit(pd.DataFrame({"m": ["a", 1, "b"]}, dtype=object))


def _formats(df, tmp_path):
    """The same table as pandas, a Parquet directory, a CSV glob and a dask DataFrame."""
    _uneven(df).to_parquet(tmp_path / "pq")
    for i, (a, b) in enumerate([(0, 300), (300, 301), (301, len(df))]):
        df.iloc[a:b].to_csv(tmp_path / f"part-{i}.csv", index=False)
    return {"pandas": df, "parquet dir": read_table(tmp_path / "pq"),
            "csv glob": read_table(str(tmp_path / "part-*.csv")), "dask": _uneven(df)}


def test_a_parquet_directory_a_csv_glob_and_a_dask_frame_give_the_pandas_model(tmp_path):
    df = _table()
    features = ["age", "income", "purpose", "housing"]
    ref = None
    for kind, frame in _formats(df, tmp_path).items():
        X = TableEncoder().fit_transform(frame[features])
        y = (frame["risk"] == "bad").astype(int)
        model = FairKernelRegressor(n_fair_features=4, n_landmarks=60, random_state=0).fit(
            X, y, sensitive_features=frame["sex"])
        pred = np.asarray(model.predict(X))
        if ref is None:
            ref = model.dual_coef_, pred
            continue
        np.testing.assert_allclose(model.dual_coef_, ref[0], rtol=1e-10, atol=1e-10,
                                   err_msg=kind)
        np.testing.assert_allclose(pred, ref[1], rtol=1e-10, atol=1e-10, err_msg=kind)


def test_estimators_and_metrics_take_dask_frames_as_read_parquet_returns_them(tmp_path,
                                                                           several_blocks):
    df = _table()
    _uneven(df).to_parquet(tmp_path / "pq")
    frame = dd.read_parquet(tmp_path / "pq")  # unknown divisions and lengths, text groups
    assert frame.npartitions in (5, 6) and not frame.known_divisions
    frame = frame.assign(sex=frame["sex"].astype("category"))
    numeric = ["age", "income"]
    kw = dict(n_landmarks=50, cv=3, random_state=0)
    y = (df["risk"] == "bad").astype(int)
    mem = FairKernelClassifierCV(**kw).fit(df[numeric], y, sensitive_features=df["sex"])
    lazy = FairKernelClassifierCV(**kw).fit(frame[numeric], (frame["risk"] == "bad").astype(int),
                                            sensitive_features=frame["sex"])
    np.testing.assert_allclose(lazy.dual_coef_, mem.dual_coef_, rtol=1e-10, atol=1e-12)
    assert lazy.best_params_ == mem.best_params_
    np.testing.assert_array_equal(np.asarray(lazy.predict(frame[numeric])),
                                  mem.predict(df[numeric]))
    pred = pd.Series(mem.predict(df[numeric]))
    lazy_pred = dd.from_pandas(pred, npartitions=3)
    lazy = demographic_parity_difference(None, lazy_pred, sensitive_features=frame["sex"])
    assert lazy == pytest.approx(
        demographic_parity_difference(None, pred, sensitive_features=df["sex"]), abs=1e-15)
    assert error_rate(frame["risk"] == "bad", lazy_pred) == pytest.approx(
        error_rate(df["risk"] == "bad", pred), abs=1e-15)
    codes = df["purpose"].astype("category").cat.codes
    assert clustering_report(dd.from_pandas(codes, npartitions=4), lazy_pred,
                             sensitive_features=frame["sex"]) == pytest.approx(
        clustering_report(codes, pred, sensitive_features=df["sex"]))


# -- the passes ----------------------------------------------------------------------------

_READS: dict[int, list] = {}
_LOCK = threading.Lock()
_SERIAL = itertools.count()  # not id(): a dead table's id is reused, and so its dask keys


class _Reads:
    """A dask DataFrame whose partitions count their reads and refuse the main thread (the
    client): run with an in-process cluster, whose tasks run in worker threads (the graph is
    pickled even so: the count lives in this module)."""

    def __init__(self, df, cuts):
        self.df, self.cuts, self.key = df, cuts, next(_SERIAL)
        _READS[self.key] = []

    @property
    def count(self):
        return len(_READS[self.key])

    @property
    def keys(self):
        """The tasks that read, in order (an assertion's message)."""
        return _READS[self.key]

    def __dask_tokenize__(self):
        return ("counted-table", self.key)

    def __call__(self, i):
        if threading.current_thread() is threading.main_thread():
            raise AssertionError("a partition was read on the client")
        with _LOCK:
            _READS[self.key].append(getattr(distributed.worker.thread_state, "key", None))
        a, b = self.cuts[i], self.cuts[i + 1]
        return self.df.iloc[a:b].reset_index(drop=True)

    def frame(self):
        return dd.from_map(self, range(len(self.cuts) - 1),
                           meta=self.df.iloc[:0].reset_index(drop=True))


@pytest.mark.parametrize(("gammas", "searches"), [
    ([0.1], 2),  # the CV's two passes over the training rows
    (None, 1),  # gammas="auto" on 2,250 rows: the width's sample is every row, read once
])
def test_a_table_is_read_by_the_named_passes_and_never_on_the_client(tmp_path, gammas,
                                                                      searches):
    from daskfair.cli.fkr_job import fkr_job
    from daskfair.store import create_run

    df = _table(3000)
    cuts = (0, 700, 1500, 2200, 3000)
    reads = _Reads(df, cuts)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        data = table_data(reads.frame(), "risk", "sex", None, True, chunk_rows=500)
        assert reads.count == 4  # the summary pass
        assert data.X.chunks[0] == (500, 200, 500, 300, 500, 200, 500, 300)
        with create_run(tmp_path / "r.zarr", kind="fkr") as run:
            summary = fkr_job(data, run=run, client=client,
                              params={"n_landmarks": 100, "cv": 3, "gammas": gammas},
                              echo=lambda text: None)
    # the summary; the training rows' own pass (the pipeline's encoder and scaling are
    # fitted from it); the landmark draw (up to 8 blocks: here all 4 partitions); the CV's
    # searches; one pass over the test rows for their predictions, labels and groups
    assert reads.count == 4 * (1 + 1 + 1 + searches + 1), reads.keys
    assert [r["method"] for r in summary["results"]] == ["FairKernelClassifierCV (<= 0.01)"]


def test_load_input_checks_the_label_in_the_pass(tmp_path):
    df = _table(300)
    df["three"] = np.random.default_rng(0).choice(["a", "b", "c"], len(df))
    df.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ValueError, match=r"classification needs a binary label, but the label "
                                         r"column 'three' has 3: a, b, c values"):
        load_input(path=tmp_path / "t.csv", label="three", sensitive="sex", need_label=True,
                   task="classification")
    with pytest.raises(ValueError, match=r"'three' is text with 3: a, b, c values"):
        load_input(path=tmp_path / "t.csv", label="three", sensitive="sex", need_label=True,
                   task="auto")
    d = load_input(path=tmp_path / "t.csv", label="risk", sensitive="sex", need_label=True,
                   task="auto", chunk_rows=64)
    assert d.X.chunks[0] == (64, 64, 64, 64, 44) and d.summary.n_rows == 300
    # housing has a <missing> level
    assert d.description["encoded"] == {"purpose": 4, "housing": 4, "three": 3}
    np.testing.assert_array_equal(dask.compute(d.y)[0], df["risk"].to_numpy())


def test_every_method_takes_dask_frames_and_gives_the_numpy_result(several_blocks):
    """Each method fitted on a dask DataFrame/Series of unequal partitions (as read_parquet
    gives them) equals the same data in numpy."""
    from daskfair import FairClusteringEnsemble, SAFairKMeans, pareto_front

    rng = np.random.default_rng(3)
    n = 240
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    s = pd.Series(rng.choice(["f", "m"], n), name="sex")
    base = pd.DataFrame(rng.integers(0, 3, (n, 4)), columns=list("pqrs"))
    cuts = (0, 50, 50, 51, 170, 240)
    Xd, sd, based = (_uneven(v.to_frame() if isinstance(v, pd.Series) else v, cuts)
                     for v in (X, s, base))
    sd = sd["sex"]

    reg = FairKernelRegressor(n_fair_features=2, n_landmarks=40, random_state=0)
    y = X["a"] + (s == "f")
    yd = _uneven(y.to_frame("y"), cuts)["y"]
    ref = reg.fit(X.to_numpy(), y.to_numpy(), sensitive_features=s.to_numpy())
    lazy = FairKernelRegressor(n_fair_features=2, n_landmarks=40, random_state=0).fit(
        Xd, yd, sensitive_features=sd)
    np.testing.assert_allclose(np.asarray(lazy.transform(Xd)), ref.transform(X.to_numpy()),
                               rtol=1e-10, atol=1e-12)
    kw = dict(random_state=0, max_iter=5)
    np.testing.assert_array_equal(
        np.asarray(FairClusteringEnsemble(3, **kw).fit(based, sensitive_features=sd).labels_),
        FairClusteringEnsemble(3, **kw).fit(base.to_numpy(), sensitive_features=s.to_numpy())
        .labels_)
    one = SAFairKMeans(3, random_state=0)
    np.testing.assert_array_equal(one.fit(Xd, sensitive_features=sd).labels_,
                                  SAFairKMeans(3, random_state=0).fit(
                                      X.to_numpy(), sensitive_features=s.to_numpy()).labels_)
    kw = dict(n_clusters=3, n_init=4, max_iter=6, random_state=0)
    np.testing.assert_array_equal(pareto_front(Xd, sensitive_features=sd, **kw).cost,
                                  pareto_front(X.to_numpy(), sensitive_features=s.to_numpy(),
                                               **kw).cost)


def test_the_mixed_types_error_names_columns_with_spaces():
    from daskfair.cli.inputs import _mixed_types

    # dask's message when a CSV column guessed numeric holds text further down
    text = ("Mismatched dtypes found in `pd.read_csv`/`pd.read_table`.\n\n"
            "+--------+--------+----------+\n"
            "| Column | Found  | Expected |\n"
            "+--------+--------+----------+\n"
            "| b      | object | int64    |\n"
            "| my col | object | float64  |\n"
            "+--------+--------+----------+\n")
    said = str(_mixed_types(ValueError(text), "t.csv"))
    assert said.startswith("column(s) ['b', 'my col'] of t.csv hold numbers in some rows")
    other = ValueError("Mismatched dtypes found, in a layout not known")
    assert _mixed_types(other, "t.csv") is other


@pytest.mark.parametrize("dask_input", [False, True])
def test_output_ranges_are_what_a_scaler_learns_from_the_encoded_rows(dask_input):
    """Missing numbers (an indicator), a missing text level, a level in every row, a text
    column of one value and a numeric column missing everywhere: the ranges from the pass
    equal numpy's min and max of the encoded rows, and a scaler built from them equals
    ColumnScaler().fit on those rows."""
    from daskfair.scaling import ColumnScaler
    from daskfair.tables import TableEncoder

    df = _table(400).drop(columns=["sex", "risk"])
    df.loc[df.index[:7], "income"] = np.nan
    df["everywhere"] = "yes"
    df["nothing"] = np.nan
    enc = TableEncoder(numeric_missing="indicator")
    X = enc.fit_transform(_uneven(df, (0, 97, 97, 98, 400)) if dask_input else df)
    X = np.asarray(X.compute() if hasattr(X, "compute") else X)
    low, high = enc.output_ranges()
    np.testing.assert_array_equal(low, X.min(axis=0))
    np.testing.assert_array_equal(high, X.max(axis=0))
    assert (low == 1).sum() >= 1 and (low == high).sum() >= 2  # the constant columns are in
    fitted = ColumnScaler().fit(X)
    built = ColumnScaler.from_values(low, high - low)
    np.testing.assert_array_equal(built.offset_, fitted.offset_)
    np.testing.assert_array_equal(built.scale_, fitted.scale_)
