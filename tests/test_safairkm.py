"""SAfairKM: exact state after every move, swaps that raise balance, the front, VfairKM."""

from __future__ import annotations

import numpy as np
import pytest

from daskfair import ParetoFront, SAFairKMeans, VFairKMeans, pareto_front, vfairkm_front
from daskfair.metrics import balance, kmeans_cost
from daskfair.safairkm import _block_functions as kk
from daskfair.safairkm.pareto import nondominated
from daskfair.safairkm.problem import make_problem, members_from_labels, start_labels
from daskfair.store import IncompleteRunError, open_run


def _data(n=600, d=3, groups=(0.2, 0.3, 0.5), seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(len(groups), n, p=groups)
    X = rng.normal(size=(n, d)) + 3.0 * g[:, None]  # groups sit apart: k-means is unfair
    return X, g


def _cluster_balance(labels, g, k, j):
    table = np.zeros((k, j))
    np.add.at(table, (labels, g), 1)
    return table.min(axis=1) / table.max(axis=1), table


def _step(problem, member, n_a, n_b, t, seed, target=False):
    # one member from members_from_labels: its label vector is pool row 0, no delta
    lab, sums, counts = member.pool[0], member.sums[0], member.counts[0]
    kk.run_member(problem.X, problem.groups, problem.grp_idx, problem.grp_ptr, lab, sums,
                  counts, n_a, n_b, 1, t, target, 8, np.uint64(seed), problem.total_sq,
                  np.empty((0, 2)), np.zeros(1, np.int64))


@pytest.mark.parametrize("target", [False, True])
def test_state_stays_exact_over_thousands_of_moves(target):
    X, g = _data()
    problem = make_problem(X, g, 5)
    member = members_from_labels(problem, start_labels(problem, 0, 2, 0))
    for t in range(1500):
        _step(problem, member, 7, 3, t, 1000 + t, target)
        if t % 50 == 0 or t == 1499:
            lab = member.pool[0]
            f1 = kk.cost_of(member.sums[0], member.counts[0], problem.total_sq, len(X))
            f2 = kk.balance_of(member.counts[0])
            assert f1 == pytest.approx(kmeans_cost(X, lab), rel=1e-10, abs=1e-12)
            assert f2 == balance(lab, sensitive_features=g, n_clusters=5)
            sums, counts = kk.init_state(problem.X, g, lab, 5, 3)  # centered coordinates
            np.testing.assert_allclose(member.sums[0], sums, atol=1e-9)
            np.testing.assert_array_equal(member.counts[0], counts)
            assert (counts.sum(axis=1) > 0).all()  # no cluster ever empties


@pytest.mark.parametrize("n_groups", [2, 3])
def test_every_swap_raises_the_least_balanced_cluster(n_groups):
    weights = (0.35, 0.65) if n_groups == 2 else (0.2, 0.3, 0.5)
    X, g = _data(groups=weights, seed=n_groups)
    k = 4
    problem = make_problem(X, g, k)
    # k-means++ start: groups sit apart, so the clusters start badly unbalanced
    member = members_from_labels(problem, start_labels(problem, 1, 2, 3))
    swaps = 0
    for t in range(400):
        before = member.pool[0].copy()
        bal, table = _cluster_balance(before, g, k, n_groups)
        _step(problem, member, 0, 1, t, t)
        after = member.pool[0]
        if np.array_equal(before, after):
            continue
        swaps += 1
        moved = np.flatnonzero(before != after)
        assert len(moved) == 2  # one point each way
        new_bal, new_table = _cluster_balance(after, g, k, n_groups)
        np.testing.assert_array_equal(new_table.sum(axis=1), table.sum(axis=1))
        keys = sorted(map(tuple, np.sort(table, axis=1) / table.max(axis=1, keepdims=True)))
        new_keys = sorted(map(tuple, np.sort(new_table, axis=1)
                              / new_table.max(axis=1, keepdims=True)))
        lowest = min(range(k), key=lambda c: (tuple(np.sort(table[c]) / table[c].max()), c))
        if n_groups == 2:
            assert new_bal[lowest] > bal[lowest]  # the least balanced cluster gains
        else:  # with three groups its scarcest group gains (a tie can delay the ratio)
            assert new_bal[lowest] >= bal[lowest]
            assert new_table[lowest].min() >= table[lowest].min()
        assert new_bal.min() >= bal.min()  # the overall balance never falls
        assert new_keys > keys  # and the clusters' sorted keys rise: swaps never cycle
    assert swaps > 20
    assert balance(member.pool[0], sensitive_features=g) > 0.5 * min(weights) / max(weights)


def test_dominance_filter_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        L = int(rng.integers(1, 60))
        f1 = rng.integers(0, 8, L).astype(float)  # many ties on purpose
        f2 = rng.integers(0, 8, L).astype(float)
        kept = set(nondominated(f1, f2).tolist())
        brute = set()
        for i in range(L):
            dominated = any(
                (f1[j] <= f1[i] and f2[j] >= f2[i] and (f1[j] < f1[i] or f2[j] > f2[i]))
                for j in range(L))
            first = all(not (f1[j] == f1[i] and f2[j] == f2[i]) for j in range(i))
            if not dominated and first:
                brute.add(i)
        assert kept == brute
        # the seed's Algorithm 3 (line 8): drop a point only if another is better in both
        strict = nondominated(f1, f2, dominance="strict")
        assert set(strict.tolist()) == {
            i for i in range(L) if not any(f1[j] < f1[i] and f2[j] > f2[i] for j in range(L))}
        assert np.all(np.diff(f1[strict]) >= 0)  # by cost, as the weak filter
        assert kept <= set(strict.tolist())
    assert len(nondominated([], [], dominance="strict")) == 0
    with pytest.raises(ValueError, match="dominance must be one of"):
        nondominated([1.0], [1.0], dominance="pareto")


def test_strict_filter_front(client):
    # the seed's filter: no point of the list is worse than another in both objectives, and
    # ties (equal cost or equal balance) may stay, which the weak filter removes
    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    front = pareto_front(X, sensitive_features=g, n_clusters=3, n_init=6, max_iter=20,
                         random_state=1, client=client, dominance="strict")
    c, b = front.cost, front.balance
    assert np.all(np.diff(c) >= 0)
    assert not np.any((c[None, :] < c[:, None]) & (b[None, :] > b[:, None]))
    labels = front.labels
    for i in range(0, len(front), max(1, len(front) // 5)):
        assert c[i] == pytest.approx(kmeans_cost(X, labels[i]), rel=1e-9)
        assert b[i] == balance(labels[i], sensitive_features=g, n_clusters=3)
    with pytest.raises(ValueError, match="dominance must be one of"):
        pareto_front(X, sensitive_features=g, n_clusters=3, dominance="x", client=client)


def _check_front(front, X, g, k):
    assert np.all(np.diff(front.cost) > 0) and np.all(np.diff(front.balance) > 0)
    labels = front.labels
    assert labels.shape == (len(front), len(X))
    for i in range(0, len(front), max(1, len(front) // 5)):
        assert front.cost[i] == pytest.approx(kmeans_cost(X, labels[i]), rel=1e-9)
        assert front.balance[i] == balance(labels[i], sensitive_features=g, n_clusters=k)


def test_front_is_exact_and_spans_the_trade_off(client):
    X, g = _data(n=400, groups=(0.4, 0.6))
    front = pareto_front(X, sensitive_features=g, n_clusters=3, n_init=6, max_iter=60,
                         random_state=1, client=client)
    _check_front(front, X, g, 3)
    assert front.balance[0] < 0.2 and front.balance[-1] > 0.5  # from unfair to near-fair
    assert front.hypervolume((front.cost.max() * 1.1, 0.0)) > 0
    assert front.history[-1]["iteration"] == 60


def test_same_front_for_any_workers_and_batches(client):
    import distributed

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    kw = dict(sensitive_features=g, n_clusters=3, n_init=4, max_iter=25, random_state=7)
    a = pareto_front(X, client=client, n_batches=1, **kw)
    b = pareto_front(X, client=client, n_batches=5, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as one:
        c = pareto_front(X, client=one, **kw)
        c.labels  # noqa: B018 - gathered while its cluster lives
        lost = pareto_front(X, client=one, **kw)
    with pytest.raises(RuntimeError, match="no longer reachable"):
        lost.labels  # noqa: B018
    for other in (b, c):
        np.testing.assert_array_equal(a.cost, other.cost)
        np.testing.assert_array_equal(a.balance, other.balance)
        np.testing.assert_array_equal(a.labels, other.labels)


def test_in_process_path_equals_the_cluster_path_bit_for_bit(client, monkeypatch, tmp_path):
    """Without a running client the methods run in this process (no cluster is started):
    the same fronts, labels and stored runs as on a cluster, for SAfairKM and VfairKM."""
    import daskfair.runtime.clients as deploy
    from daskfair.runtime.inprocess import InProcessClient

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    kw = dict(sensitive_features=g, n_clusters=3, n_init=4, max_iter=25, random_state=7)
    monkeypatch.setattr(deploy, "_current_client", lambda: None)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert isinstance(deploy.task_client(), InProcessClient)
    here = pareto_front(X, store=str(tmp_path / "here.zarr"), **kw)
    there = pareto_front(X, client=client, store=str(tmp_path / "there.zarr"), **kw)
    assert len(here) > 5
    for a, b in ((here, there), (ParetoFront.from_store(str(tmp_path / "here.zarr")),
                                  ParetoFront.from_store(str(tmp_path / "there.zarr")))):
        np.testing.assert_array_equal(a.cost, b.cost)
        np.testing.assert_array_equal(a.balance, b.balance)
        np.testing.assert_array_equal(a.labels, b.labels)
    mus = (0.0, 50.0, 200.0)
    kw = dict(sensitive_features=g, n_clusters=3, fairness_weights=mus, random_state=0)
    v_here = vfairkm_front(X, **kw)
    v_there = vfairkm_front(X, **kw, client=client)
    np.testing.assert_array_equal(v_here.cost, v_there.cost)
    np.testing.assert_array_equal(v_here.labels, v_there.labels)


def _algorithm3(X, g, k, n_init, n_iter, seed, update_pairs, strict=False):
    """The seed's Algorithm 3 written as one sequential loop over Algorithm 2 on full copies
    of the label vectors: every member expanded by every pair, one global filter per
    iteration, ranks by (cost, balance)."""
    from daskfair._random import as_seed_sequence
    from daskfair.safairkm.problem import start_members

    problem = make_problem(X, g, k)
    ss = as_seed_sequence(seed)
    base_seed = np.uint64(int(ss.generate_state(1, np.uint64)[0]))
    start = start_members(problem, list(range(n_init)), n_init, ss)
    members = [(start.labels[b], start.sums[b], start.counts[b], start.f1[b], start.f2[b])
               for b in range(n_init)]
    n, P = len(X), len(update_pairs)
    for t in range(n_iter):
        out = []
        for rank, parent in enumerate(members):
            out.append(parent)
            for w, (n_a, n_b) in enumerate(update_pairs):
                lab, sums, counts = (a.copy() for a in parent[:3])
                kk.run_member(problem.X, problem.groups, problem.grp_idx, problem.grp_ptr,
                              lab, sums, counts, n_a, n_b, 1, t, False, 32,
                              np.uint64(kk.stream_seed(base_seed, t, rank, w)),
                              problem.total_sq,
                              np.empty((0, 2)), np.zeros(1, np.int64))
                out.append((lab, sums, counts, kk.cost_of(sums, counts, problem.total_sq, n),
                            kk.balance_of(counts)))
        f1, f2 = (np.array([m[i] for m in out]) for i in (3, 4))
        keys = np.arange(len(out))  # rank · (P + 1) + pair slot
        assert len(out) == len(members) * (P + 1)
        members = [out[i] for i in kk.select_nondominated(f1, f2, keys, strict)]
    return [np.array([m[i] for m in members]) for i in (0, 3, 4)]


@pytest.mark.parametrize("limit", [0, 60, 10**9])
def test_delta_children_equal_full_copies(limit):
    """Children stored as deltas (kept as deltas for ever, written out after 60 changes, or
    at once) give the members of Algorithm 3 on full copies, bit for bit, also when a batch
    is assembled from two pools (a rebalance) and with the list's last member split off."""
    from daskfair._random import as_seed_sequence
    from daskfair.safairkm.front import DEFAULT_PAIRS
    from daskfair.safairkm.problem import start_members
    from daskfair.safairkm.tasks import expand_task

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    ref = _algorithm3(X, g, 3, 4, 10, 7, DEFAULT_PAIRS)
    problem = make_problem(X, g, 3)
    ss = as_seed_sequence(7)
    base_seed = int(ss.generate_state(1, np.uint64)[0])
    members = start_members(problem, [0, 1, 2, 3], 4, ss)
    update_pairs, longest = np.asarray(DEFAULT_PAIRS), 0
    for t in range(10):
        L = len(members)
        pieces = [(members, np.arange(L - 1))]
        if L > 1:  # the last member from a batch of its own (another pool)
            pieces.append((members.take([L - 1], limit=0), np.array([0])))
        out = expand_task(problem, pieces, np.arange(L), update_pairs, 1, t, False, 32,
                          base_seed, limit=limit)
        assert len(out) == 5 * L and len(out.pool) <= len(members.pool) + 1
        # a child holds its parent's delta and at most q·(n_a + 2 n_b) positions more
        grown = (out.dhi - out.dlo).reshape(L, 5)
        grown = grown[:, 1:] - grown[:, :1]
        assert (grown >= 0).all() and (grown <= update_pairs @ [1, 2]).all() and grown.any()
        members = out.take(kk.select_nondominated(out.f1, out.f2, out.keys), limit)
        longest = max(longest, (members.dhi - members.dlo).max())
    # the three regimes really ran: no deltas, deltas cut at the limit, long deltas
    assert {0: longest == 0, 60: 0 < longest <= 60, 10**9: longest > 60}[limit]
    np.testing.assert_array_equal(members.labels, ref[0])
    np.testing.assert_array_equal(members.f1, ref[1])
    np.testing.assert_array_equal(members.f2, ref[2])


@pytest.mark.parametrize("dominance", ["weak", "strict"])
def test_sync_every_1_is_the_seeds_algorithm_3_exactly(client, dominance):
    """The default (one filter per iteration) against an independent sequential loop: the
    same members, bit for bit, for any number of batches."""
    from daskfair.safairkm.front import DEFAULT_PAIRS

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    ref = _algorithm3(X, g, 3, 4, 12, 7, DEFAULT_PAIRS, dominance == "strict")
    for n_batches in (1, 3):
        front = pareto_front(X, sensitive_features=g, n_clusters=3, n_init=4, max_iter=12,
                             random_state=7, dominance=dominance, n_batches=n_batches,
                             budget=10_000, client=client)
        np.testing.assert_array_equal(front.cost, ref[1])
        np.testing.assert_array_equal(front.balance, ref[2])
        np.testing.assert_array_equal(front.labels, ref[0])


def test_sync_every_same_front_on_1_and_2_workers_and_in_process(client, tmp_path):
    """Several iterations per round trip: for a fixed sync_every and number of batches, the
    front is the same on one worker, two workers and in this process; it differs from
    sync_every=1 (the batches filter their own lists in between), and a resumed run ends
    with the uninterrupted front."""
    import distributed

    from daskfair.runtime.inprocess import InProcessClient

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    kw = dict(sensitive_features=g, n_clusters=3, n_init=4, max_iter=25, random_state=7,
              sync_every=4, n_batches=2)
    two = pareto_front(X, client=client, **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as one_worker:
        one = pareto_front(X, client=one_worker, **kw)
        one.labels  # noqa: B018 - gathered while its cluster lives
    with InProcessClient(2) as local:
        here = pareto_front(X, client=local, **kw)
    for other in (one, here):
        np.testing.assert_array_equal(two.cost, other.cost)
        np.testing.assert_array_equal(two.labels, other.labels)
    # rounds of 4 iterations, the last one shortened to reach n_iter exactly
    assert [h["iteration"] for h in two.history] == [4, 8, 12, 16, 20, 24, 25]
    plain = pareto_front(X, client=client, **{**kw, "sync_every": 1})
    assert not np.array_equal(plain.cost, two.cost)

    def crash(t, cost, bal):
        if t == 16:
            raise _Stop

    store = tmp_path / "sync.zarr"
    with pytest.raises(_Stop):
        pareto_front(X, client=client, store=str(store), checkpoint_every=8, callback=crash,
                     **kw)
    resumed = pareto_front(X, client=client, store=str(store), checkpoint_every=8,
                           resume=True, **kw)
    np.testing.assert_array_equal(resumed.cost, two.cost)
    np.testing.assert_array_equal(resumed.labels, two.labels)


class _Stop(Exception):
    pass


def test_resume_after_interruption_gives_the_same_front(client, tmp_path):
    X, g = _data(n=300, groups=(0.4, 0.6), seed=2)
    kw = dict(sensitive_features=g, n_clusters=3, n_init=4, max_iter=24, random_state=3,
              checkpoint_every=5, client=client)
    full = pareto_front(X, **kw)

    def crash(t, cost, bal):
        if t == 13:
            raise _Stop

    store = tmp_path / "front.zarr"
    with pytest.raises(_Stop):
        pareto_front(X, store=str(store), callback=crash, **kw)
    with pytest.raises(IncompleteRunError):
        open_run(store)
    assert open_run(store, allow_incomplete=True).attrs["checkpoint"]["iteration"] == 10
    with pytest.raises(ValueError, match="parameters differ"):
        pareto_front(X, store=str(store), resume=True, **{**kw, "random_state": 4})
    resumed = pareto_front(X, store=str(store), resume=True, **kw)
    np.testing.assert_array_equal(full.cost, resumed.cost)
    np.testing.assert_array_equal(full.labels, resumed.labels)
    stored = ParetoFront.from_store(store)
    np.testing.assert_array_equal(stored.cost, full.cost)
    np.testing.assert_array_equal(stored.balance, full.balance)
    np.testing.assert_array_equal(stored.labels, full.labels)
    assert stored.history[-1]["iteration"] == 24 and stored.params["max_iter"] == 24
    # the history before the checkpoint survives the resume: every iteration, in order, with
    # the same front sizes as the uninterrupted run
    assert [h["iteration"] for h in stored.history] == list(range(1, 25))
    assert [h["n_points"] for h in stored.history] == [h["n_points"] for h in full.history]
    assert np.all(np.diff([h["seconds"] for h in stored.history]) >= 0)


def test_front_stops_at_the_budget(client):
    X, g = _data(n=300, groups=(0.4, 0.6))
    front = pareto_front(X, sensitive_features=g, n_clusters=3, n_init=4, max_iter=200,
                         budget=10, random_state=0, client=client)
    assert len(front) >= 10 and front.history[-1]["iteration"] < 200


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_clusters": 700}, ValueError, "n_clusters"),
        ({"n_clusters": 1}, ValueError, ">= 2"),
        ({"update_pairs": [(1, 2, 3)]}, ValueError, "pairs"),
        ({"update_pairs": [(0, 0)]}, ValueError, "pairs of integers >= 0, not both 0"),
        # an iteration's moves are logged: their room is bounded before a kernel allocates it
        ({"update_pairs": [(10**12, 1)]}, ValueError,
         r"ask for 1,000,000,000,002 moves .* at most 1,000 are allowed"),
        ({"update_pairs": [(2**62, 2**62)]}, ValueError, "moves per member and iteration"),
        ({"q": 10**9}, ValueError, r"ask for 28,000,000,000 moves per member"),
        ({"target": "far"}, ValueError, "target"),
        ({"max_iter": 0}, ValueError, "max_iter"),
        ({"resume": True}, ValueError, "store"),
    ],
)
def test_front_bad_input(client, kwargs, error, match):
    X, g = _data(n=300)
    args = {"sensitive_features": g, "n_clusters": 3, "client": client, **kwargs}
    with pytest.raises(error, match=match):
        pareto_front(X, **args)


def test_bad_groups_and_data():
    X, g = _data(n=100)
    with pytest.raises(ValueError, match="at least 2"):
        SAFairKMeans(3).fit(X, sensitive_features=np.zeros(100))
    with pytest.raises(ValueError, match="NaN"):
        SAFairKMeans(3).fit(np.where(np.eye(100, 3) > 0, np.nan, X), sensitive_features=g)
    with pytest.raises(ValueError, match="entries but X has"):
        SAFairKMeans(3).fit(X, sensitive_features=g[:50])
    tiny = g.copy()
    tiny[:] = 0
    tiny[:2] = 1  # group 1 has 2 rows < K = 3: balance 0 is all one can get
    with pytest.warns(UserWarning, match="fewer rows than n_clusters"):
        est = SAFairKMeans(3, random_state=0, max_iter=50).fit(X, sensitive_features=tiny)
    assert est.balance_ == 0.0
    with pytest.raises(ValueError, match="empty"):
        SAFairKMeans(3, init=np.zeros(100, int)).fit(X, sensitive_features=g)


def test_estimator_matches_its_history_and_metrics():
    X, g = _data(n=500, groups=(0.3, 0.7))
    est = SAFairKMeans(4, n_kmeans_updates=10, n_swap_updates=5, max_iter=200,
                       random_state=0).fit(X, sensitive_features=g)
    assert est.cost_ == pytest.approx(kmeans_cost(X, est.labels_), rel=1e-10)
    assert est.balance_ == balance(est.labels_, sensitive_features=g)
    np.testing.assert_allclose(est.history_[-1], [est.cost_, est.balance_])
    for k in range(4):
        np.testing.assert_allclose(est.cluster_centers_[k], X[est.labels_ == k].mean(axis=0))
    again = SAFairKMeans(4, n_kmeans_updates=10, n_swap_updates=5, max_iter=200,
                         random_state=0).fit(X, sensitive_features=g)
    np.testing.assert_array_equal(est.labels_, again.labels_)
    km = SAFairKMeans(4, n_kmeans_updates=10, n_swap_updates=0, max_iter=200,
                      random_state=0).fit(X, sensitive_features=g)
    assert est.balance_ > km.balance_ and est.cost_ > km.cost_  # the trade-off, both ways
    assert est.predict(X[:7]).shape == (7,)


def test_predict_is_lazy_for_dask_and_numpy_otherwise():
    import dask.array as da
    import pandas as pd
    from sklearn.base import ClusterMixin

    X, g = _data(n=500, groups=(0.3, 0.7))
    est = SAFairKMeans(4, max_iter=50, random_state=0)
    labels = est.fit_predict(X, sensitive_features=g)  # scikit-learn's, passing the groups
    np.testing.assert_array_equal(labels, est.labels_)
    for cls in (SAFairKMeans, VFairKMeans):
        assert "fit_predict" not in vars(cls) and cls.fit_predict is ClusterMixin.fit_predict
    new = X[::-1] * 1.1
    expected = est.predict(new)
    assert isinstance(expected, np.ndarray) and expected.shape == (500,)
    lazy = est.predict(da.from_array(new, chunks=(120, 3)))  # 5 blocks of rows
    assert isinstance(lazy, da.Array) and lazy.numblocks == (5,)
    np.testing.assert_array_equal(lazy.compute(), expected)
    frame = est.predict(pd.DataFrame(new))
    assert isinstance(frame, np.ndarray)
    np.testing.assert_array_equal(frame, expected)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(da.from_array(np.where(np.eye(500, 3) > 0, np.nan, new),
                                  chunks=(120, 3))).compute()


def test_a_failed_fit_sets_no_fitted_attribute():
    X, g = _data(n=100)
    for est, bad in ((SAFairKMeans(3, init=np.zeros(100, int)), "empty"),
                     (SAFairKMeans(3, target="far"), "target"),
                     (VFairKMeans(3, tol=-1.0), "tol"),
                     (VFairKMeans(3, min_group_size=60), "min_group_size")):
        with pytest.raises(ValueError, match=bad):
            est.fit(X, sensitive_features=g)
        assert not [name for name in vars(est) if name.endswith("_")]


@pytest.mark.parametrize(("params", "match"), [
    ({"target": "far"}, "target must be one of \\('local', 'global'\\)"),
    ({"max_iter": 0}, "max_iter must be an integer >= 1"),
    ({"max_swap_candidates": 0}, "max_swap_candidates must be an integer >= 1"),
    ({"min_group_size": 0}, "min_group_size must be an integer >= 1"),
    ({"small_groups": "drop"}, "small_groups must be one of"),
    ({"random_state": -1}, "random_state must be None or a non-negative integer"),
])
def test_the_front_and_the_estimator_share_one_check(params, match):
    """pareto_front refuses the parameters it shares with SAFairKMeans with the estimator's
    own messages, before any data is read (X here is not even an array)."""
    X, g = _data(n=100)
    with pytest.raises(ValueError, match=match):
        SAFairKMeans(3, **params).fit(X, sensitive_features=g)
    with pytest.raises(ValueError, match=match):
        pareto_front(None, sensitive_features=g, n_clusters=3, **params)


@pytest.mark.parametrize(("params", "match"), [
    ({"max_iter": 0}, "max_iter must be an integer >= 1"),
    ({"max_bound_iter": 1.5}, "max_bound_iter must be an integer >= 1"),
    ({"tol": np.nan}, "tol must be a finite number >= 0"),
    ({"min_group_size": 0}, "min_group_size must be an integer >= 1"),
    ({"small_groups": "drop"}, "small_groups must be one of"),
])
def test_the_vfairkm_front_and_its_estimator_share_one_check(params, match):
    X, g = _data(n=100)
    error = TypeError if params == {"max_bound_iter": 1.5} else ValueError  # not an integer
    with pytest.raises(error, match=match):
        VFairKMeans(3, **params).fit(X, sensitive_features=g)
    with pytest.raises(error, match=match):
        vfairkm_front(None, sensitive_features=g, n_clusters=3, fairness_weights=[0.0],
                      **params)
    with pytest.raises(ValueError, match="fairness_weight must be a finite number >= 0"):
        VFairKMeans(3, fairness_weight=-1.0).fit(X, sensitive_features=g)
    for weights in ([], [0.0, -1.0], [np.inf]):
        with pytest.raises(ValueError, match="fairness_weights"):
            vfairkm_front(X, sensitive_features=g, n_clusters=3, fairness_weights=weights)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fairness_weight'"):
        vfairkm_front(X, sensitive_features=g, n_clusters=3, fairness_weights=[0.0],
                      fairness_weight=1.0)


def test_fronts_apply_min_group_size_and_small_groups(tmp_path):
    """pareto_front and vfairkm_front merge or refuse small groups as the estimators do; the
    merge is stored with the front."""
    from daskfair.runtime.inprocess import InProcessClient

    X, g = _data(n=300, groups=(0.4, 0.6), seed=5)
    s = g.copy()
    s[:5], s[5:10] = 2, 3  # two groups of 5 rows: 10 when merged
    merged = np.where(s >= 2, "other", s.astype(str))
    sa = dict(n_clusters=3, n_init=4, max_iter=8, random_state=7)
    vf = dict(n_clusters=3, fairness_weights=[0.0, 50.0], random_state=0)
    with InProcessClient(2) as local:
        for front, kw in ((pareto_front, sa), (vfairkm_front, vf)):
            with pytest.raises(ValueError, match="fewer than min_group_size=10"):
                front(X, sensitive_features=s, min_group_size=10, client=local, **kw)
            with pytest.warns(UserWarning, match="other"):
                got = front(X, sensitive_features=s, min_group_size=10, small_groups="merge",
                            client=local, **kw)
            ref = front(X, sensitive_features=merged, client=local, **kw)
            np.testing.assert_array_equal(got.cost, ref.cost)
            np.testing.assert_array_equal(got.labels, ref.labels)
            assert (got.params["min_group_size"], got.params["small_groups"]) == (10, "merge")
        store = str(tmp_path / "merged.zarr")
        with pytest.warns(UserWarning, match="other"):
            pareto_front(X, sensitive_features=s, min_group_size=10, small_groups="merge",
                         store=store, client=local, **sa)
    assert ParetoFront.from_store(store).params["small_groups"] == "merge"
    assert open_run(store).params["min_group_size"] == 10


def test_vfairkm_without_penalty_is_lloyd():
    from sklearn.cluster import KMeans

    from daskfair.safairkm.vfairkm import _init_centers

    X, g = _data(n=500)
    est = VFairKMeans(4, fairness_weight=0.0, random_state=0).fit(X, sensitive_features=g)
    problem = make_problem(X, g, 4)
    centers = _init_centers(problem, 0) + problem.offset  # the problem is centered
    ref = KMeans(4, init=centers, n_init=1, algorithm="lloyd", tol=0, max_iter=100).fit(X)
    np.testing.assert_array_equal(est.labels_, ref.labels_)
    assert est.cost_ == pytest.approx(ref.inertia_ / len(X), rel=1e-9)


def test_vfairkm_objective_is_the_soft_objective():
    from daskfair.safairkm.vfairkm import _objective

    rng = np.random.default_rng(3)
    n, k, J = 40, 3, 2
    S = rng.dirichlet(np.ones(k), n)
    e = rng.random((n, k))
    codes = rng.integers(0, J, n)
    onehot = np.eye(J)[codes]
    u = onehot.mean(axis=0)
    kl = 0.0
    for c in range(k):  # Σ_k D_KL(U ‖ P_k), P_k(j) = Σ_{p in j} s_pc / Σ_p s_pc
        P = np.array([S[codes == j, c].sum() for j in range(J)]) / S[:, c].sum()
        kl += sum(u[j] * np.log(u[j] / P[j]) for j in range(J))
    assert _objective(S, e, onehot, u, 7.0) == pytest.approx((S * e).sum() + 7.0 * kl,
                                                              rel=1e-12)


def _never_rises(obj):
    return np.all(np.diff(obj) <= 1e-12 * np.abs(obj[:-1]))


@pytest.mark.parametrize("mu", [0.0, 1.0, 10.0, 100.0, 1000.0])
def test_vfairkm_objective_never_rises_on_an_80_20_toy(mu):
    rng = np.random.default_rng(0)
    n = 400
    g = (rng.random(n) < 0.2).astype(int)  # 80/20 groups, each its own blob
    X = rng.normal(size=(n, 2)) * 0.5 + np.where(g[:, None] == 1, 3.0, 0.0)
    est = VFairKMeans(2, fairness_weight=mu, random_state=0).fit(X, sensitive_features=g)
    assert len(est.objective_) > 2 and _never_rises(est.objective_)
    # small μ keeps k-means' answer (each group its own cluster: infinite fairness error);
    # a large μ mixes the groups in both clusters
    assert np.isfinite(est.fairness_error_) == (mu >= 100)


def test_vfairkm_objective_never_rises_in_the_seeds_adult_setting(data_dir):
    # the seed's μ_max for Adult, K = 10 is 3,260: before the backtracking step this fit
    # rose and ended with one-group clusters (balance 0, cost .98)
    from daskfair.datasets import load_dataset, preprocess_safairkm

    d = load_dataset("safairkm_adult", data_dir=data_dir)
    X, s = preprocess_safairkm(d.X, d.sensitive, n_samples=5000)
    plain = VFairKMeans(10, fairness_weight=0.0, random_state=0).fit(X, sensitive_features=s)
    for mu in (800.0, 3260.0):
        est = VFairKMeans(10, fairness_weight=mu, random_state=0).fit(X, sensitive_features=s)
        assert _never_rises(est.objective_)
        assert est.balance_ > plain.balance_ and est.fairness_error_ < plain.fairness_error_
        assert est.cost_ < 0.5  # not the one-group clustering (cost .98)


def test_vfairkm_penalty_buys_fairness(data_dir, client):
    from daskfair.datasets import load_dataset, preprocess_safairkm

    d = load_dataset("safairkm_adult", data_dir=data_dir)
    X, s = preprocess_safairkm(d.X, d.sensitive, n_samples=2000)
    plain = VFairKMeans(5, fairness_weight=0.0, random_state=0).fit(X, sensitive_features=s)
    fair = VFairKMeans(5, fairness_weight=800.0, random_state=0).fit(X, sensitive_features=s)
    assert fair.fairness_error_ < 0.5 * plain.fairness_error_
    assert fair.balance_ > plain.balance_ and fair.cost_ > plain.cost_
    front = vfairkm_front(X, sensitive_features=s, n_clusters=5, fairness_weights=[0, 200, 800],
                          random_state=0, client=client)
    assert len(front) >= 2 and front.params["fairness_weight"][0] == 0
    _check_front(front, X, s, 5)


def test_resume_from_a_checkpoint_with_empty_batches(tmp_path):
    """A batch whose members were all dominated is empty at a checkpoint: the stored batches
    are numbered without gaps, so the resume reads every one of them (the kill-point test
    found a resume that failed on such a gap: KeyError 'checkpoint_10/b0')."""
    from daskfair.runtime.inprocess import InProcessClient

    X, g = _data(n=200, groups=(0.4, 0.6), seed=4)
    kw = dict(sensitive_features=g, n_clusters=3, n_init=4, n_batches=4, max_iter=12,
              random_state=3, checkpoint_every=2)

    def crash(t, cost, bal):
        if t == 3:
            raise _Stop

    store = tmp_path / "front.zarr"
    with InProcessClient(2) as local:
        full = pareto_front(X, client=local, **kw)
        with pytest.raises(_Stop):
            pareto_front(X, client=local, store=str(store), callback=crash, **kw)
        run = open_run(store, allow_incomplete=True)
        assert run.checkpoint["iteration"] == 2
        # the first of the four batches was empty at iteration 2 (sizes 0, 16, 7, 6)
        assert [len(r) for r in run.checkpoint["ranks"]] == [16, 7, 6]
        resumed = pareto_front(X, client=local, store=str(store), resume=True, **kw)
    np.testing.assert_array_equal(full.cost, resumed.cost)
    np.testing.assert_array_equal(full.labels, resumed.labels)
