"""Saved models: every fitted estimator through daskfair.save/load gives the same bits on
numpy, pandas and several-partition dask input; a store that could run code, changed files,
missing parts and other runs are refused; ColumnScaler against scikit-learn's scalers."""

from __future__ import annotations

import itertools
import pickle
import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import daskfair
from daskfair.models import UnsafeModelError
from daskfair.models.tree import decode, encode
from daskfair.scaling import ColumnScaler
from daskfair.store import CorruptStoreError, StoreError, create_run, open_run
from daskfair.tables import TableEncoder

from .test_tables import _table

N_LANDMARKS = 40


@pytest.fixture(scope="module")
def data():
    X, y, s = (np.asarray(a) for a in daskfair.make_fair_regression(400, 4, random_state=0))
    return X, y, (y > 0).astype(int), np.where(s == 1, "b", "a")


def _fitted(name, data):
    X, y, yc, s = data
    est, target = {
        "regressor": (daskfair.FairKernelRegressor(n_landmarks=N_LANDMARKS, random_state=0), y),
        "classifier": (daskfair.FairKernelClassifier(n_landmarks=N_LANDMARKS, random_state=0),
                       yc),
        "logistic": (daskfair.FairKernelClassifier(loss="logistic", n_landmarks=N_LANDMARKS,
                                                   random_state=0), yc),
        "ridge": (daskfair.FairKernelRidge(n_landmarks=N_LANDMARKS, random_state=0), y),
        "classifier_cv": (daskfair.FairKernelClassifierCV(
            cv=2, n_landmarks=N_LANDMARKS, random_state=np.random.RandomState(3)), yc),
        "regressor_cv": (daskfair.FairKernelRegressorCV(
            cv=2, n_landmarks=N_LANDMARKS, random_state=0, disparity_bound=0.2), y),
    }[name]
    return est.fit(X, target, sensitive_features=s)


def _outputs(model, X):
    out = {}
    for method in ("predict", "decision_function", "predict_proba", "transform"):
        if hasattr(model, method):
            value = getattr(model, method)(X)
            out[method] = value.compute() if hasattr(value, "compute") else np.asarray(value)
    return out


def _same_bits(a, b, X):
    left, right = _outputs(a, X), _outputs(b, X)
    assert left.keys() == right.keys() and left
    for method in left:
        np.testing.assert_array_equal(left[method], right[method], err_msg=method)


def _inputs(X):
    """numpy, pandas and a dask array of several canonical blocks and chunks."""
    return [X, pd.DataFrame(X), da.from_array(X, chunks=(70, -1))]


@pytest.mark.parametrize("name", ["regressor", "classifier", "logistic", "ridge",
                                  "classifier_cv", "regressor_cv"])
def test_fkr_estimators_round_trip_to_the_bit(name, data, tmp_path, several_blocks):
    est = _fitted(name, data)
    loaded = daskfair.load(daskfair.save(est, tmp_path / "m.zarr"))
    assert type(loaded) is type(est) and loaded.get_params().keys() == est.get_params().keys()
    for X in _inputs(data[0]):
        _same_bits(est, loaded, X)
    # every fitted attribute is back, arrays with their dtype and bits
    assert vars(loaded).keys() == vars(est).keys()
    for key, value in vars(est).items():
        if isinstance(value, np.ndarray):
            assert loaded.__dict__[key].dtype == value.dtype, key
            np.testing.assert_array_equal(loaded.__dict__[key], value, err_msg=key)


@pytest.mark.parametrize("name", ["classifier_cv", "regressor_cv"])
def test_a_loaded_cv_model_chooses_as_the_original(name, data, tmp_path):
    est = _fitted(name, data)
    loaded = daskfair.load(daskfair.save(est, tmp_path / "cv.zarr"))
    pd.testing.assert_frame_equal(loaded.frontier_, est.frontier_)
    for bound in (0.0, 0.05, 0.3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no candidate reaches 0: the fairest, warned
            a = _copy(est).choose(bound, disparity_confidence=None)
            b = _copy(loaded).choose(bound, disparity_confidence=None)
        assert (a.best_index_, a.best_params_) == (b.best_index_, b.best_params_)
        _same_bits(a, b, data[0])
    assert len({_copy(est).choose(b).best_index_ for b in (0.05, 0.3)}) > 0


def _copy(est):
    return pickle.loads(pickle.dumps(est))


def test_fitted_estimators_pickle_and_clone(data):
    for name in ("classifier", "regressor_cv"):
        est = _fitted(name, data)
        _same_bits(est, pickle.loads(pickle.dumps(est)), data[0])
        fresh = clone(est)
        assert fresh.get_params() == est.get_params() and not hasattr(fresh, "dual_coef_")


def test_clusterers_and_a_front_point_round_trip(tmp_path, several_blocks):
    X, s, _ = (np.asarray(a) for a in daskfair.make_fair_blobs(300, n_clusters=3,
                                                                random_state=0))
    for est in (daskfair.SAFairKMeans(3, max_iter=5, random_state=0),
                daskfair.VFairKMeans(3, random_state=0)):
        est.fit(X, sensitive_features=s)
        loaded = daskfair.load(daskfair.save(est, tmp_path / type(est).__name__))
        for Xi in _inputs(X):
            _same_bits(est, loaded, Xi)
        np.testing.assert_array_equal(loaded.labels_, est.labels_)
    front = daskfair.pareto_front(X, sensitive_features=s, n_clusters=3, n_init=4,
                                  max_iter=8, random_state=0)
    for i in range(len(front)):
        point = front.point(i)
        labels = front.labels[i]
        np.testing.assert_array_equal(point.labels_, labels)
        # the centers are the means of the point's clusters (independent numpy)
        means = np.stack([X[labels == k].mean(axis=0) for k in range(3)])
        np.testing.assert_allclose(point.cluster_centers_, means, rtol=1e-12, atol=1e-12)
        assert (point.cost_, point.balance_) == (front.cost[i], front.balance[i])
    loaded = daskfair.load(daskfair.save(front.point(0), tmp_path / "point.zarr"))
    _same_bits(front.point(0), loaded, X)
    nearest = np.argmin(((X[:, None, :] - front.centers[0][None]) ** 2).sum(axis=2), axis=1)
    np.testing.assert_array_equal(loaded.predict(X), nearest)


def test_a_front_point_by_position_or_balance():
    front = daskfair.ParetoFront(np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.5, 0.9]),
                                 _labels=np.zeros((3, 4), dtype=np.int64),
                                 centers=np.zeros((3, 2, 1)))
    assert front.index(balance=0.6) == 1 and front.index(balance=1.0) == 2
    assert front.index(front_point=np.int64(2)) == 2
    for kwargs, message in [({}, "choose one with front_point="),
                            ({"front_point": 1, "balance": 0.5}, "not both"),
                            ({"front_point": 3}, r"integer in \[0, 2\], got 3"),
                            ({"front_point": True}, "integer"),
                            ({"balance": 1.5}, r"balance must lie in \[0, 1\]")]:
        with pytest.raises(ValueError, match=message):
            front.index(**kwargs)
    no_centers = daskfair.ParetoFront(front.cost, front.balance, _labels=front.labels)
    with pytest.raises(ValueError, match="keeps no cluster centers"):
        no_centers.point(0)


def _table_pipeline():
    df = _table(600)
    features = df.drop(columns=["sex", "risk"])
    enc = TableEncoder().fit(features)
    scaler = ColumnScaler().fit(enc.transform(features))
    model = daskfair.FairKernelClassifier(n_landmarks=N_LANDMARKS, random_state=0)
    pipe = Pipeline([("encode", enc), ("scale", scaler), ("model", model)])
    return pipe.fit(features, df["risk"], model__sensitive_features=df["sex"]), features


def test_a_pipeline_with_text_columns_round_trips_on_pandas_and_dask_tables(tmp_path):
    pipe, features = _table_pipeline()
    loaded = daskfair.load(daskfair.save(pipe, tmp_path / "pipe.zarr"))
    assert [name for name, _ in loaded.steps] == ["encode", "scale", "model"]
    _same_bits(pipe, loaded, features)
    frame = dd.from_pandas(features, npartitions=3)
    np.testing.assert_array_equal(loaded.predict(frame).compute(), pipe.predict(features))
    assert set(loaded.predict(features)) <= {"bad", "good"}
    for part in (pipe["encode"], pipe["scale"]):
        back = daskfair.load(daskfair.save(part, tmp_path / type(part).__name__))
        np.testing.assert_array_equal(back.transform(features if part is pipe["encode"]
                                                     else pipe["encode"].transform(features)),
                                      part.transform(features if part is pipe["encode"]
                                                     else pipe["encode"].transform(features)))


def test_save_refuses_what_it_cannot_save_or_must_not_replace(data, tmp_path):
    with pytest.raises(TypeError, match="takes a fitted daskfair estimator"):
        daskfair.save(StandardScaler().fit(data[0]), tmp_path / "a.zarr")
    with pytest.raises(TypeError, match="save a point"):
        daskfair.save(daskfair.ParetoFront(np.ones(1), np.ones(1)), tmp_path / "b.zarr")
    with pytest.raises(Exception, match="not fitted: call fit before saving"):
        daskfair.save(daskfair.FairKernelRegressor(), tmp_path / "c.zarr")
    est = _fitted("regressor", data)
    path = daskfair.save(est, tmp_path / "m.zarr")
    assert path.is_absolute()
    with pytest.raises(FileExistsError, match="overwrite=True"):
        daskfair.save(est, path)
    daskfair.save(est, path, overwrite=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a daskfair run store"):
        daskfair.save(est, tmp_path / "notes", overwrite=True)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"
    run = create_run(tmp_path / "demo.zarr", kind="demo")
    run.mark_complete()
    with pytest.raises(FileExistsError, match="only a model run there is replaced"):
        daskfair.save(est, tmp_path / "demo.zarr", overwrite=True)


def _crafted(path, tree, arrays=()):
    """A complete, internally consistent store whose model tree is ``tree``."""
    run = create_run(path, kind="model", params={"class": "x"})
    for name, values in arrays:
        run.write_array(name, values)
    run.set_attrs(model=tree)
    run.mark_complete()
    return path


def test_load_refuses_stores_that_name_code_are_changed_or_incomplete(data, tmp_path):
    est = _fitted("regressor", data)
    ok = encode(est, {type(est): "FairKernelRegressor",
                      type(est.feature_map_): "NystroemMap"}, "model")
    # a class outside the table, even an importable one: refused unread
    for name in ("os.system", "builtins.eval", "subprocess.Popen", "Pipeline"):
        bad = {"~": "estimator", "class": name, "params": {"~": "dict", "items": []},
               "state": {"~": "dict", "items": []}}
        path = _crafted(tmp_path / f"{name}.zarr", bad)
        with pytest.raises(UnsafeModelError, match=f"names '{name}'.*refused unread"):
            daskfair.load(path)
    # an unknown node kind, and an array outside the model's folder
    with pytest.raises(UnsafeModelError, match="unknown kind 'pickle'"):
        daskfair.load(_crafted(tmp_path / "k.zarr", {"~": "pickle", "data": "gASV"}))
    with pytest.raises(UnsafeModelError, match="outside model/"):
        daskfair.load(_crafted(tmp_path / "o.zarr", {"~": "array", "path": "../x"}))
    # a missing array (the manifest agrees: it was never written)
    arrays = list(ok[1].items())
    path = _crafted(tmp_path / "missing.zarr", ok[0], arrays[1:])
    with pytest.raises(StoreError, match=f"refers to the array '{arrays[0][0]}'.*incomplete"):
        daskfair.load(path)
    # a changed array: the manifest disagrees
    path = daskfair.save(est, tmp_path / "m.zarr")
    chunk = next(p for p in (path / "model" / "dual_coef_").rglob("*") if p.is_file()
                 and p.name != "zarr.json")
    data_bytes = bytearray(chunk.read_bytes())
    data_bytes[-1] ^= 1
    chunk.write_bytes(bytes(data_bytes))
    with pytest.raises(CorruptStoreError, match="corrupt"):
        daskfair.load(path)
    # a run with no model, and a run of another kind
    run = create_run(tmp_path / "empty.zarr", kind="model")
    run.mark_complete()
    with pytest.raises(StoreError, match="with no model in it"):
        daskfair.load(tmp_path / "empty.zarr")
    run = create_run(tmp_path / "fce.zarr", kind="fce")
    run.mark_complete()
    with pytest.raises(StoreError, match="'fce' run, which has no model for new rows"):
        daskfair.load(tmp_path / "fce.zarr")
    with pytest.raises(StoreError, match="no run store"):
        daskfair.load(tmp_path / "nothing.zarr")
    with pytest.raises(ValueError, match="front_point= and balance= are for SAfairKM"):
        daskfair.load(daskfair.save(est, tmp_path / "m2.zarr"), front_point=0)


def test_the_tree_keeps_types_and_special_values():
    frame = pd.DataFrame({"a": [1.0, np.nan], "b": ["x", None], "c": [True, False]},
                         index=[5, 7])
    value = {"nan": float("nan"), "inf": -float("inf"), "big": 2**70, "t": (1, "a", None),
             "set": {"x", "y"}, "f32": np.float32(0.1), "i8": np.int8(-3), 3: "int key",
             "text": np.array(["a", "bc"]), "objects": np.array([1, "a", None], dtype=object),
             "empty": np.zeros((0, 3)), "scalar": np.array(2.5), "frame": frame,
             "seq": np.random.SeedSequence(12345678901234567890123, spawn_key=(1, 2)),
             "rs": np.random.RandomState(4), "gen": np.random.default_rng(5)}
    tree, arrays = encode(value, {}, "m")
    back = decode(tree, {}, arrays.__getitem__)
    assert np.isnan(back["nan"]) and back["inf"] == -np.inf and back["big"] == 2**70
    assert back["t"] == (1, "a", None) and back["set"] == {"x", "y"} and back[3] == "int key"
    assert type(back["f32"]) is np.float32 and back["f32"] == np.float32(0.1)
    assert type(back["i8"]) is np.int8 and back["i8"] == -3
    for key in ("text", "objects", "empty", "scalar"):
        assert back[key].dtype == value[key].dtype and back[key].shape == value[key].shape
        assert back[key].tolist() == value[key].tolist()
    pd.testing.assert_frame_equal(back["frame"], frame)
    assert back["seq"].generate_state(4).tolist() == value["seq"].generate_state(4).tolist()
    assert back["rs"].random() == np.random.RandomState(4).random()
    assert back["gen"].random() == np.random.default_rng(5).random()
    with pytest.raises(TypeError, match=r"cannot save x\.y: a builtins\.object"):
        encode({"x": {"y": object()}}, {}, "m")
    with pytest.raises(TypeError, match="cannot save"):
        encode(da.zeros(3), {}, "m")


@pytest.mark.parametrize("method,reference", [("minmax", MinMaxScaler),
                                              ("standard", StandardScaler)])
def test_column_scaler_against_scikit_learn(method, reference, several_blocks):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)) * [1, 10, 100, 0]  # a constant column becomes 0
    Y = rng.normal(size=(50, 4))
    ours = ColumnScaler(method).fit(X)
    np.testing.assert_allclose(ours.transform(Y), reference().fit(X).transform(Y), rtol=1e-12,
                               atol=1e-12)
    lazy = ColumnScaler(method).fit(da.from_array(X, chunks=(30, -1)))
    np.testing.assert_allclose(lazy.offset_, ours.offset_, rtol=1e-12)
    out = lazy.transform(da.from_array(Y, chunks=(7, -1)))
    assert isinstance(out, da.Array)
    np.testing.assert_allclose(out.compute(), ours.transform(Y), rtol=1e-12)
    unit = ColumnScaler(method, unit_rows=True).fit(X).transform(Y)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-12)
    # in place (predict_table's path): the same bits, one-hot-like columns left as they are
    onehot = np.hstack([Y, (Y > 0).astype(np.float64)])
    for unit_rows in (False, True):
        scaler = ColumnScaler(method, unit_rows=unit_rows).fit(
            np.hstack([X, np.tile([[0.0], [1.0]], (100, 4))]))
        own = onehot.copy()
        assert scaler.transform_into(own) is own
        np.testing.assert_array_equal(own, scaler.transform(onehot))
    with pytest.raises(ValueError, match="float64 numpy array"):
        ours.transform_into(Y.astype(np.float32))
    with pytest.raises(ValueError, match="expecting 4 features"):
        ours.transform(Y[:, :3])
    with pytest.raises(ValueError, match="method must be one of"):
        ColumnScaler("robust").fit(X)


def test_relative_store_paths_mean_the_clients_directory(tmp_path, monkeypatch):
    """Workers started in another directory write where the client meant (issue 37)."""
    import distributed

    start, later = tmp_path / "start", tmp_path / "later"
    start.mkdir()
    later.mkdir()
    monkeypatch.chdir(start)
    X, s, _ = (np.asarray(a) for a in daskfair.make_fair_blobs(200, n_clusters=2,
                                                                random_state=0))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        monkeypatch.chdir(later)
        front = daskfair.pareto_front(X, sensitive_features=s, n_clusters=2, n_init=2,
                                      max_iter=4, random_state=0, store="rel.zarr",
                                      checkpoint_every=2, client=client)
    assert open_run(later / "rel.zarr").is_complete and not (start / "rel.zarr").exists()
    np.testing.assert_array_equal(daskfair.ParetoFront.from_store(later / "rel.zarr").cost,
                                  front.cost)


def test_a_rows_prediction_is_the_same_bits_in_any_block_or_position(data):
    """What lets predict_table score partitions apart: predictions of uneven slices, of one
    row alone and of dask chunks equal the whole array's, bit for bit."""
    X = data[0]
    for name in ("classifier", "regressor_cv"):
        est = _fitted(name, data)
        whole = est.predict(X) if name == "regressor_cv" else est.decision_function(X)
        method = est.predict if name == "regressor_cv" else est.decision_function
        cuts = [0, 1, 2, 255, 256, 257, 300, 399, 400]
        parts = [method(X[a:b]) for a, b in itertools.pairwise(cuts) if b > a]
        np.testing.assert_array_equal(np.concatenate(parts), whole)
        np.testing.assert_array_equal([method(X[i:i + 1])[0] for i in (0, 77, 399)],
                                      whole[[0, 77, 399]])
        lazy = method(da.from_array(X, chunks=((3, 250, 7, 140), -1))).compute()
        np.testing.assert_array_equal(lazy, whole)


def test_every_class_a_model_may_hold_has_a_schema():
    """A class added to the table of saved classes must say what a fitted one holds."""
    from daskfair.models.io import CLASSES
    from daskfair.models.schema import SCHEMAS

    assert set(SCHEMAS) == set(CLASSES)


def test_a_cv_model_without_refit_and_with_feature_names_round_trips(data, tmp_path):
    """The schema's optional attributes: no refitted model, feature names from a frame."""
    X, _, yc, s = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = daskfair.FairKernelClassifierCV(cv=2, n_landmarks=N_LANDMARKS, refit=False,
                                          random_state=0).fit(frame, yc, sensitive_features=s)
    back = daskfair.load(daskfair.save(est, tmp_path / "cv.zarr"))
    assert not hasattr(back, "dual_coef_") and list(back.feature_names_in_) == list("abcd")
    np.testing.assert_array_equal(back.cv_error_, est.cv_error_)
