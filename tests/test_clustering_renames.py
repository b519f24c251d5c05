"""The clustering methods' renamed parameters (docs/vocabulary.md, "Renamed"): every old name
warns with a FutureWarning that names the new one and gives exactly the result of the new
name; giving both is an error; the new names warn about nothing; stores written with the old
parameter keys still resume."""

import warnings

import numpy as np
import pytest

from daskfair import open_run
from daskfair._random import as_seed_sequence
from daskfair.ensemble import FairClusteringEnsemble
from daskfair.safairkm import VFairKMeans, pareto_front, sa2gd_front, vfairkm_front
from daskfair.store import create_run


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(2, n, p=(0.35, 0.65))
    X = rng.normal(size=(n, 2)) + 2.5 * g[:, None]
    return X, g


def _pool(n=200, c=3, m=5, seed=3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, c, size=n)
    groups = (rng.random(n) < 0.3 + 0.2 * truth).astype(int)
    base = np.column_stack([np.where(rng.random(n) < 0.75, truth, rng.integers(0, c, n))
                            for _ in range(m)])
    return base, groups, c


def _new_names_are_silent(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        return call()


def _renamed(old, new):
    return pytest.warns(FutureWarning, match=rf"'{old}' is renamed '{new}'.*{new}=")


FRONT = dict(n_clusters=3, budget=1500, random_state=4)


@pytest.mark.parametrize(("old", "new", "value"), [
    ("pairs", "update_pairs", ((6, 0), (3, 2))),
    ("n_starts", "n_init", 5),
    ("n_iter", "max_iter", 7),
])
def test_pareto_front_old_names(old, new, value):
    X, g = _data()
    base = {"n_init": 4, "max_iter": 5}
    base.pop(new, None)
    ref = _new_names_are_silent(
        lambda: pareto_front(X, sensitive_features=g, **FRONT, **base, **{new: value}))
    with _renamed(old, new):
        got = pareto_front(X, sensitive_features=g, **FRONT, **base, **{old: value})
    np.testing.assert_array_equal(got.cost, ref.cost)
    np.testing.assert_array_equal(got.balance, ref.balance)
    np.testing.assert_array_equal(got.labels, ref.labels)
    assert got.params == ref.params
    with pytest.raises(TypeError, match=rf"both '{old}' \(renamed\) and '{new}'"):
        pareto_front(X, sensitive_features=g, **FRONT, **base, **{old: value, new: value})


def test_pareto_front_default_n_clusters_is_8():
    X, g = _data(n=160)
    front = pareto_front(X, sensitive_features=g, n_init=2, max_iter=2, random_state=0)
    assert front.params["n_clusters"] == 8
    assert front.labels.max() == 7


def test_vfairkmeans_mu():
    X, g = _data()
    ref = _new_names_are_silent(lambda: VFairKMeans(3, fairness_weight=40.0, random_state=0)
                                .fit(X, sensitive_features=g))
    with _renamed("mu", "fairness_weight"):
        got = VFairKMeans(3, mu=40.0, random_state=0).fit(X, sensitive_features=g)
    np.testing.assert_array_equal(got.labels_, ref.labels_)
    np.testing.assert_array_equal(got.objective_, ref.objective_)
    with pytest.raises(ValueError, match="both 'mu' \\(renamed\\) and 'fairness_weight'"):
        VFairKMeans(3, mu=40.0, fairness_weight=10.0).fit(X, sensitive_features=g)


def test_vfairkm_front_mus():
    X, g = _data()
    weights = [0.0, 30.0, 300.0]
    ref = _new_names_are_silent(lambda: vfairkm_front(
        X, sensitive_features=g, n_clusters=3, fairness_weights=weights, random_state=0))
    with _renamed("mus", "fairness_weights"):
        got = vfairkm_front(X, sensitive_features=g, n_clusters=3, mus=weights,
                            random_state=0)
    np.testing.assert_array_equal(got.cost, ref.cost)
    np.testing.assert_array_equal(got.labels, ref.labels)
    assert got.params["fairness_weight"] == got.params["mu"] == ref.params["fairness_weight"]
    with pytest.raises(TypeError, match="both 'mus' \\(renamed\\) and 'fairness_weights'"):
        vfairkm_front(X, sensitive_features=g, mus=weights, fairness_weights=weights)


def test_sa2gd_front_pairs():
    def grad_a(x, rng):
        return x - 1.0

    def grad_b(x, rng):
        return x + 1.0

    kw = dict(n_total=3, n_iter=50, step=0.05, random_state=1)
    pairs = [(1, 2), (3, 0)]
    ref = _new_names_are_silent(lambda: sa2gd_front(grad_a, grad_b, [0.0], **kw,
                                                    update_pairs=pairs))
    with _renamed("pairs", "update_pairs"):
        got = sa2gd_front(grad_a, grad_b, [0.0], **kw, pairs=pairs)
    assert [(r.n_a, r.n_b) for r in got] == [(r.n_a, r.n_b) for r in ref]
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a.x, b.x)
    with pytest.raises(TypeError, match="both 'pairs' \\(renamed\\) and 'update_pairs'"):
        sa2gd_front(grad_a, grad_b, [0.0], **kw, pairs=pairs, update_pairs=pairs)


@pytest.mark.parametrize(("old", "new", "value"), [
    ("fairness", "fairness_weight", 0.02),
    ("lambda1", "consensus_weight", 0.01),
])
def test_fce_old_names(old, new, value):
    base, groups, c = _pool()
    ref = _new_names_are_silent(lambda: FairClusteringEnsemble(
        c, random_state=0, max_iter=8, **{new: value}).fit(base, sensitive_features=groups))
    with _renamed(old, new):
        got = FairClusteringEnsemble(c, random_state=0, max_iter=8, **{old: value}).fit(
            base, sensitive_features=groups)
    np.testing.assert_array_equal(got.labels_, ref.labels_)
    np.testing.assert_array_equal(got.objective_, ref.objective_)
    assert got.fairness_ == ref.fairness_
    other = 0.5 * value
    with pytest.raises(ValueError, match=rf"both '{old}' \(renamed\) and '{new}'"):
        FairClusteringEnsemble(c, **{old: value, new: other}).fit(
            base, sensitive_features=groups)


def test_fce_n_clusters_none_is_auto():
    base, groups, _ = _pool()
    ref = _new_names_are_silent(lambda: FairClusteringEnsemble(random_state=0, max_iter=5)
                                .fit(base, sensitive_features=groups))
    assert FairClusteringEnsemble().n_clusters == "auto"
    with pytest.warns(FutureWarning, match='n_clusters="auto"'):
        got = FairClusteringEnsemble(None, random_state=0, max_iter=5).fit(
            base, sensitive_features=groups)
    assert got.n_clusters_ == ref.n_clusters_
    np.testing.assert_array_equal(got.labels_, ref.labels_)
    with pytest.raises(ValueError, match="n_clusters must be an integer or 'auto'"):
        FairClusteringEnsemble("many").fit(base, sensitive_features=groups)


def test_fce_stores_keep_the_first_keys(tmp_path):
    """A store records fairness, lambda1 and n_clusters=None for "auto", as before the
    renaming: a run interrupted under the old names resumes under the new ones."""
    base, groups, _ = _pool()
    FairClusteringEnsemble(random_state=0, max_iter=4, fairness_weight=0.01,
                           consensus_weight=0.002).fit(base, sensitive_features=groups,
                                                       store=tmp_path / "a.zarr")
    params = open_run(tmp_path / "a.zarr").params
    assert params["fairness"] == 0.01 and params["lambda1"] == 0.002
    assert params["n_clusters"] is None
    assert not {"fairness_weight", "consensus_weight"} & set(params)
    # a run of the old version that stopped before its first checkpoint
    old = {**params}
    create_run(tmp_path / "b.zarr", kind="fce", params=old).close()
    est = FairClusteringEnsemble(random_state=0, max_iter=4, fairness_weight=0.01,
                                 consensus_weight=0.002)
    est.fit(base, sensitive_features=groups, store=tmp_path / "b.zarr", resume=True)
    np.testing.assert_array_equal(open_run(tmp_path / "b.zarr").read_array("labels"),
                                  open_run(tmp_path / "a.zarr").read_array("labels"))


def test_front_stores_keep_the_first_keys(tmp_path):
    X, g = _data()
    seed = as_seed_sequence(4)
    # the parameters as the first stores wrote them
    old = {"n_clusters": 3, "pairs": [[6, 0], [3, 2]], "n_starts": 4, "n_iter": 5,
           "budget": 1500, "q": 1, "target": "local", "max_swap_candidates": 32,
           "seed_entropy": str(seed.entropy), "seed_spawn_key": list(seed.spawn_key),
           "n_samples": len(X), "n_groups": 2}
    create_run(tmp_path / "old.zarr", kind="safairkm", params=old).close()
    kw = dict(sensitive_features=g, update_pairs=((6, 0), (3, 2)), n_init=4, max_iter=5,
              **FRONT)
    resumed = pareto_front(X, **kw, store=tmp_path / "old.zarr", resume=True)
    fresh = pareto_front(X, **kw, store=tmp_path / "new.zarr")
    assert open_run(tmp_path / "new.zarr").params == old
    np.testing.assert_array_equal(resumed.cost, fresh.cost)
    np.testing.assert_array_equal(resumed.labels, fresh.labels)
