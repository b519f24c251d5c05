import itertools
import warnings

import dask
import dask.array as da
import numpy as np
import pytest

from daskfair.ensemble import FairClusteringEnsemble, auto_fairness, base_clusterings
from daskfair.ensemble._block_functions import code_groups, sweep_block, tables_block
from daskfair.ensemble.consensus import (
    ConsensusState,
    _statistics,
    align_base,
    consensus_step,
    init_state,
    polar,
)
from daskfair.ensemble.labels import check_base_labels, hold_base_labels
from daskfair.ensemble.selection import select_n_clusters


def _random_orthogonal(rng, a, b):
    q, _ = np.linalg.qr(rng.normal(size=(max(a, b), max(a, b))))
    return q[:a, :b]


def test_polar_maximises_trace_against_brute_force():
    rng = np.random.default_rng(0)
    for shape in [(3, 3), (4, 3), (2, 3)]:
        M = rng.normal(size=shape)
        best = np.trace(M.T @ polar(M))
        for _ in range(2000):
            assert np.trace(M.T @ _random_orthogonal(rng, *shape)) <= best + 1e-12
        # Hungarian: the best partial permutation, checked over all of them
        a, b = shape
        if a <= b:
            brute = max(sum(M[i, j] for i, j in enumerate(cols))
                        for cols in itertools.permutations(range(b), a))
        else:
            brute = max(sum(M[i, j] for j, i in enumerate(rows))
                        for rows in itertools.permutations(range(a), b))
        assert np.trace(M.T @ polar(M, "hungarian")) == pytest.approx(brute)


def test_h_step_is_the_best_orthonormal_h():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(12, 3))
    H = polar(B)
    np.testing.assert_allclose(H.T @ H, np.eye(3), atol=1e-12)
    for _ in range(2000):
        assert np.trace(_random_orthogonal(rng, 12, 3).T @ B) <= np.trace(H.T @ B) + 1e-12


def _dense_y_objective(Y_labels, HR, groups, lam2, c, T):
    Y = np.eye(c)[Y_labels]
    G = np.eye(T)[groups]
    return ((Y - HR) ** 2).sum() + lam2 * ((G.T @ Y) ** 2).sum()


def test_sweep_row_choices_are_exact_minimisers():
    rng = np.random.default_rng(2)
    n, m, c, T = 9, 3, 3, 2
    base = rng.integers(0, c, size=(n, m))
    groups = rng.integers(0, T, size=n)
    labels = rng.integers(0, c, size=n)
    R_all = rng.normal(size=(m * c, c))
    offsets = np.arange(m) * c
    alpha2 = rng.random(m)
    R_h, R = _random_orthogonal(rng, c, c), _random_orthogonal(rng, c, c)
    Q = rng.normal(size=(c, c))
    Q = Q @ Q.T
    lam1, lam2 = 0.3, 0.7
    counts = np.bincount(groups * c + labels, minlength=T * c).reshape(T, c)
    W = np.repeat(alpha2, c)[:, None] * R_all
    P, Py = W @ Q @ R, lam1 * R_h.T @ Q @ R
    new, out_counts, dK, moves = sweep_block(base, groups, labels, counts, P, Py,
                                             np.append(offsets, m * c), lam2)
    # dense: B = Σ αᵢ² Y(i)R(i) + λ1 Y R_hᵀ, HR = B Q R
    Z = np.hstack([np.eye(c)[base[:, i]] for i in range(m)])
    B = sum(alpha2[i] * np.eye(c)[base[:, i]] @ R_all[offsets[i]:offsets[i] + c]
            for i in range(m)) + lam1 * np.eye(c)[labels] @ R_h.T
    HR = B @ Q @ R
    np.testing.assert_array_equal(dK, Z.T @ (np.eye(c)[new] - np.eye(c)[labels]))
    np.testing.assert_array_equal(moves, np.eye(c)[labels].T @ np.eye(c)[new])
    # replay: each row's label minimises the dense objective given all the others
    current = labels.copy()
    for j in range(n):
        costs = []
        for k in range(c):
            trial = current.copy()
            trial[j] = k
            costs.append(_dense_y_objective(trial, HR, groups, lam2, c, T))
        assert costs[new[j]] == pytest.approx(min(costs), abs=1e-12)
        current[j] = new[j]
    np.testing.assert_array_equal(out_counts,
                                  np.bincount(groups * c + new, minlength=T * c).reshape(T, c))
    # tr(YᵀHR) from the integer tables (consensus_step's formula) against the dense sum
    trace = (Z.T @ np.eye(c)[new] * P).sum() + (moves * Py).sum()
    assert trace == pytest.approx(HR[np.arange(n), new].sum(), rel=1e-12)
    assert (_dense_y_objective(new, HR, groups, lam2, c, T)
            <= _dense_y_objective(labels, HR, groups, lam2, c, T) + 1e-12)


def test_statistics_from_the_tables_equal_the_dense_ones():
    """BᵀB, ZᵀB and YᵀB from the integer tables C = ZᵀZ and K = ZᵀY (no pass over the rows)
    against dense products, with base clusterings of different sizes, and the tables of
    several blocks adding up to the whole."""
    rng = np.random.default_rng(5)
    n, c, T, sizes = 50, 3, 2, np.array([2, 3, 5])
    base = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int32)
    groups, labels = rng.integers(0, T, n), rng.integers(0, c, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    S = int(sizes.sum())
    kw = dict(offsets=offsets, n_rows=S, n_clusters=c, n_groups=T)
    C, K, A = tables_block(base, groups, labels, **kw)
    halves = [tables_block(base[sl], groups[sl], labels[sl], **kw)
              for sl in (slice(0, 17), slice(17, n))]
    for whole, (x, y) in zip((C, K, A), zip(*halves, strict=True), strict=True):
        np.testing.assert_array_equal(whole, x + y)
    Z = np.hstack([np.eye(k)[base[:, i]] for i, k in enumerate(sizes)])
    Y, G = np.eye(c)[labels], np.eye(T)[groups]
    np.testing.assert_array_equal(C, Z.T @ Z)
    np.testing.assert_array_equal(K, Z.T @ Y)
    np.testing.assert_array_equal(A, G.T @ Y)
    R_all, R = rng.normal(size=(S, c)), _random_orthogonal(rng, c, c)
    alpha, lam1 = rng.dirichlet(np.ones(3)), 0.4
    state = ConsensusState(labels=labels, counts=A, R_all=R_all, R=R, alpha=alpha,
                           offsets=offsets, base_counts=np.diag(C), coassociation=C, table=K)
    BtB, ZtB, YtB = _statistics(state, lam1)
    B = Z @ (np.repeat(alpha**2, sizes)[:, None] * R_all) + lam1 * Y @ R.T
    np.testing.assert_allclose(BtB, B.T @ B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ZtB, Z.T @ B, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(YtB, Y.T @ B, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("code_limit", [1, 6, 40, 256])
@pytest.mark.parametrize("rows", [1, 7, 300])
def test_coded_tables_equal_the_dense_counts(code_limit, rows):
    """C, K and A counted over codes of consecutive base clusterings equal the dense
    products for any grouping into codes (``code_limit``; 1 counts every column alone) and
    any block length (a table is counted per code when it has at most as many cells as the
    block has rows, else row by row: both happen here), with a clustering of more clusters
    than the limit."""
    rng = np.random.default_rng(11)
    c, T = 3, 2
    sizes = np.array([2, 3, 5, 2, 300, 4, 4, 1])
    # the greedy runs, by hand: products of consecutive sizes up to the limit
    expected_runs = {1: [0, 1, 2, 3, 4, 5, 6, 7, 8], 6: [0, 2, 3, 4, 5, 6, 8],
                     40: [0, 3, 4, 5, 8], 256: [0, 4, 5, 8]}
    np.testing.assert_array_equal(code_groups(sizes, code_limit), expected_runs[code_limit])
    base = np.column_stack([rng.integers(0, k, rows) for k in sizes]).astype(np.int32)
    groups, labels = rng.integers(0, T, rows), rng.integers(0, c, rows)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    C, K, A = tables_block(base, groups, labels, offsets=offsets, n_rows=int(sizes.sum()),
                           n_clusters=c, n_groups=T, code_limit=code_limit)
    Z = np.hstack([np.eye(k, dtype=np.int64)[base[:, i]] for i, k in enumerate(sizes)])
    Y, G = np.eye(c, dtype=np.int64)[labels], np.eye(T, dtype=np.int64)[groups]
    np.testing.assert_array_equal(C, Z.T @ Z)
    np.testing.assert_array_equal(K, Z.T @ Y)
    np.testing.assert_array_equal(A, G.T @ Y)
    _, K_only, _ = tables_block(base, groups, labels, offsets=offsets,
                                n_rows=int(sizes.sum()), n_clusters=c, n_groups=T,
                                code_limit=code_limit, with_coassociation=False)
    np.testing.assert_array_equal(K_only, K)


@pytest.fixture
def pool():
    rng = np.random.default_rng(3)
    n, c = 600, 4
    truth = rng.integers(0, c, size=n)
    groups = (rng.random(n) < 0.3 + 0.15 * truth).astype(int)  # unfair: group follows class
    base = np.column_stack([np.where(rng.random(n) < 0.75, truth, rng.integers(0, c, n))
                            for _ in range(8)])
    base[:, 3] = rng.permutation(c)[base[:, 3]]  # permuted labels must not matter
    return base, groups, truth, c


def test_objective_is_monotone_and_alpha_is_optimal(pool):
    base, groups, _, c = pool
    est = FairClusteringEnsemble(c, fairness_weight=auto_fairness(len(groups), c, 2), tol=0,
                                 max_iter=15, random_state=0)
    est.fit(base, sensitive_features=groups)
    obj = est.objective_
    # tol=0 stops only at an exact fixed point (no change at all) or at max_iter
    assert len(obj) == 15 or obj[-1] == obj[-2]
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]))
    assert est.weights_.sum() == pytest.approx(1.0) and (est.weights_ > 0).all()


def test_paper_start_is_the_seeds_against_a_dense_reference(pool):
    """init="paper": R(i) = I, R = I, α = 1/m, H = polar(Σ Y(i)) from a dense SVD, and Y the
    one-hot rows nearest to H; the same state for numpy and several-block dask input."""
    import scipy.linalg

    from daskfair.ensemble.consensus import paper_state

    base, groups, _, c = pool
    base = base.copy()
    base[:, 1] = base[:, 1] % 2  # one base clustering with fewer clusters than c (R(i) = I_2×c)
    sizes = base.max(axis=0) + 1
    m = base.shape[1]
    Ysum = sum(np.eye(sizes[i])[base[:, i]] @ np.eye(sizes[i], c) for i in range(m)) / m**2
    H = scipy.linalg.polar(Ysum)[0]
    state = paper_state(base, groups, c, sizes, 2)
    np.testing.assert_array_equal(state.labels, np.argmax(H, axis=1))
    np.testing.assert_array_equal(state.R_all, np.vstack([np.eye(k, c) for k in sizes]))
    np.testing.assert_array_equal(state.alpha, np.full(m, 1 / m))
    np.testing.assert_array_equal(state.base_counts,
                                  np.concatenate([np.bincount(b) for b in base.T]))
    np.testing.assert_array_equal(
        state.counts, np.array([np.bincount(state.labels[groups == g], minlength=c)
                                for g in (0, 1)]))
    with dask.config.set({"daskfair.block-rows": 64}):
        dstate = paper_state(da.from_array(base, chunks=(97, -1)),
                             da.from_array(groups, chunks=97), c, sizes, 2)
        np.testing.assert_array_equal(dstate.labels.compute(), state.labels)


def test_paper_start_fit_never_raises_the_objective(pool):
    base, groups, _, c = pool
    est = FairClusteringEnsemble(c, init="paper", tol=0, max_iter=15)
    est.fit(base, sensitive_features=groups)
    obj = est.objective_
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]))
    with pytest.raises(ValueError, match="init must be one of"):
        FairClusteringEnsemble(c, init="svd").fit(base, sensitive_features=groups)


@pytest.mark.parametrize("iters", [1, 2])
def test_no_recovery_copy_after_the_last_iteration(pool, monkeypatch, iters):
    """The labels are copied to the client as a recovery point after the first iteration
    (the copy's cost is not known yet), never after the last one: none for one iteration, one
    for two."""
    import daskfair.ensemble.consensus as consensus

    copies = []
    on_client = consensus._on_client
    monkeypatch.setattr(consensus, "_on_client",
                        lambda state: copies.append(state.n_iter) or on_client(state))
    base, groups, _, c = pool
    with dask.config.set({"scheduler": "sync"}):
        est = FairClusteringEnsemble(c, max_iter=iters, tol=0, random_state=0).fit(
            da.from_array(base, chunks=(150, -1)), sensitive_features=da.from_array(groups, 150))
    assert est.n_iter_ == iters
    assert copies == list(range(1, iters))


@pytest.mark.parametrize("init", ["matched", "paper"])
@pytest.mark.parametrize("held", [True, False])
def test_reads_of_dask_inputs_are_what_the_docstring_says(pool, init, held, monkeypatch):
    """Held in memory (the default when they fit): base labels read once, groups twice,
    nothing per iteration. Too large to hold: base labels read once per iteration after a
    set-up of three reads (checks, starting column, tables; four with the paper's start:
    checks, co-association, start labels, their tables), groups once per iteration after two
    (FairClusteringEnsemble's docstring)."""
    import collections

    import daskfair.ensemble.consensus as consensus
    import daskfair.ensemble.labels as labels

    from ._counting import counted

    if not held:
        monkeypatch.setattr(labels, "_fits_in_memory", lambda nbytes: False)
    calls = collections.Counter()
    def counting(name, f):
        def count(*args, **kwargs):
            calls[name] += 1
            return f(*args, **kwargs)
        return count

    for name in ("hr_rows", "tables_block"):
        monkeypatch.setattr(consensus, name, counting(name, getattr(consensus, name)))
    base, groups, _, c = pool
    setup = {True: 1, False: 3 if init == "matched" else 4}[held]
    for iters in (1, 3):
        counts = collections.Counter()
        calls.clear()
        with dask.config.set({"daskfair.block-rows": 60, "scheduler": "sync"}):
            est = FairClusteringEnsemble(c, max_iter=iters, tol=0, init=init, random_state=0)
            est.fit(counted(base, counts, "base", rows=60),
                    sensitive_features=counted(groups, counts, "groups", rows=60))
        assert est.n_iter_ == iters
        per_iteration = 0 if held else iters
        assert {v for (k, _), v in counts.items() if k == "base"} == {setup + per_iteration}
        assert {v for (k, _), v in counts.items() if k == "groups"} == {2 + per_iteration}
        # passes over the (held) label matrix, ten blocks each: the tables once (the paper's
        # start: co-association, then the start's tables), then one HR pass per iteration
        # (and one for the paper's start labels)
        paper = init == "paper"
        assert dict(calls) == {"tables_block": 10 * (1 + paper), "hr_rows": 10 * (iters + paper)}


def test_alpha_step_minimises_on_the_simplex():
    rng = np.random.default_rng(4)
    err = rng.random(6) + 0.1
    alpha = (1 / err) / (1 / err).sum()
    for _ in range(2000):
        a = rng.dirichlet(np.ones(6))
        assert (a**2 * err).sum() >= (alpha**2 * err).sum() - 1e-15


def _blockwise_step(pool, chunks):
    base, groups, _, c = pool
    sizes = base.max(axis=0) + 1
    dbase = da.from_array(base, chunks=(chunks, -1))
    dgroups = da.from_array(groups, chunks=chunks)
    dstate = init_state(dbase, dgroups, dbase[:, 0], c, sizes, 2)
    return dstate, consensus_step(dbase, dgroups, dstate, consensus_weight=1e-3,
                                  fairness_weight=1e-3)


@pytest.mark.parametrize("chunks", [600, 97, 1, (250, 50, 300)])
def test_any_row_blocks_give_the_same_bits(pool, chunks):
    """Two iterations on one numpy block and on dask row blocks of 600, 97, 1 and uneven
    sizes (the consensus keeps the blocks it is given): the same labels, counts, tables,
    rotations and objective, bit for bit (its sums are of integer tables)."""
    base, groups, _, c = pool
    sizes = base.max(axis=0) + 1
    ref = init_state(base, groups, base[:, 0], c, sizes, 2)
    _, out = _blockwise_step(pool, chunks)
    if chunks != 600:
        assert len(out.labels.chunks[0]) > 1
    for _ in range(2):
        ref = consensus_step(base, groups, ref, consensus_weight=1e-3, fairness_weight=1e-3)
    out = consensus_step(da.from_array(base, chunks=(chunks, -1)),
                         da.from_array(groups, chunks=chunks), out, consensus_weight=1e-3,
                         fairness_weight=1e-3)
    np.testing.assert_array_equal(out.labels.compute(), ref.labels)
    for key in ("counts", "table", "coassociation", "R_all", "R", "alpha", "objective"):
        np.testing.assert_array_equal(getattr(out, key), getattr(ref, key), err_msg=key)


def test_blockwise_sweep_check_fails_without_the_carry(pool, monkeypatch):
    # the test above can fail: every block starting from the first block's counts (no carry
    # from block to block) gives other counts than the sequential sweep
    import daskfair.ensemble.consensus as consensus

    base, groups, _, c = pool
    state0 = init_state(base, groups, base[:, 0], c, base.max(axis=0) + 1, 2)
    ref = consensus_step(base, groups, state0, consensus_weight=1e-3, fairness_weight=1e-3)
    from daskfair.ensemble._block_functions import sweep_hr

    monkeypatch.setattr(consensus, "sweep_hr", lambda hr, g, lab, counts, *rest: sweep_hr(
        hr, g, lab, state0.counts, *rest))
    with dask.config.set({"daskfair.block-rows": 64}):
        _, out = _blockwise_step(pool, 97)
    assert not np.array_equal(out.counts, ref.counts)


def test_dask_estimator_gives_dask_labels(pool):
    base, groups, _, c = pool
    ref = FairClusteringEnsemble(c, random_state=0).fit(base, sensitive_features=groups)
    est = FairClusteringEnsemble(c, random_state=0).fit(
        da.from_array(base, chunks=(150, -1)), sensitive_features=da.from_array(groups, 200))
    assert isinstance(est.labels_, da.Array)
    np.testing.assert_array_equal(est.labels_.compute(), ref.labels_)
    # one input in memory, the other dask (found by tests/fuzz_entry_points.py): the same
    for mixed in ((base, da.from_array(groups, 200)),
                  (da.from_array(base, chunks=(150, -1)), groups)):
        out = FairClusteringEnsemble(c, random_state=0).fit(mixed[0],
                                                            sensitive_features=mixed[1])
        np.testing.assert_array_equal(np.asarray(out.labels_), ref.labels_)
    # an empty last row block is kept (the blocks are of a reasonable size) and its range
    # check stands aside for the others
    with dask.config.set({"daskfair.block-rows": 300}):
        padded = da.from_array(base, chunks=((300, 300, 0), -1))
        held, sizes = hold_base_labels(padded, c)
        checked, checked_sizes = check_base_labels(padded)
        empty = FairClusteringEnsemble(c, random_state=0).fit(
            padded, sensitive_features=da.from_array(groups, ((300, 300, 0),)))
    assert held.chunks[0] == (300, 300, 0)
    np.testing.assert_array_equal(sizes, base.max(axis=0) + 1)
    # check_base_labels only checks: the same counts, the input's own blocks, nothing held
    np.testing.assert_array_equal(checked_sizes, sizes)
    assert checked.dtype == np.int32 and checked.chunks == padded.chunks
    np.testing.assert_array_equal(empty.labels_.compute(), ref.labels_)


def test_fair_balanced_input_stays_optimal():
    # Every base clustering is the same labeling, balanced and perfectly fair:
    # 4 clusters × 2 groups × 25 rows each.
    labels = np.repeat(np.arange(4), 50)
    groups = np.tile(np.repeat([0, 1], 25), 4)
    base = np.column_stack([labels, (labels + 1) % 4, labels, (labels + 3) % 4])
    for fairness in (0.0, "auto", 1.0):
        est = FairClusteringEnsemble(4, fairness_weight=fairness, random_state=0)
        out = est.fit_predict(base, sensitive_features=groups)
        # the same partition (up to renaming the clusters)
        assert len(set(zip(out, labels, strict=True))) == 4
        D = np.zeros((2, 4))
        np.add.at(D, (groups, out), 1)
        assert (D == 25).all()


def test_fairness_term_improves_balance(pool):
    base, groups, _, c = pool
    plain = FairClusteringEnsemble(c, fairness_weight=0.0, random_state=0).fit(
        base, sensitive_features=groups)
    fair = FairClusteringEnsemble(c, fairness_weight="auto", random_state=0).fit(
        base, sensitive_features=groups)

    def balance(counts):
        return (counts.min(axis=0) / counts.max(axis=0)).min()

    assert balance(fair.group_counts_) > balance(plain.group_counts_) + 0.1
    assert fair.fairness_weight_ == pytest.approx(auto_fairness(len(groups), c, 2))


def test_auto_fairness_is_size_free(pool):
    base, groups, _, c = pool
    one = FairClusteringEnsemble(c, random_state=0).fit(base, sensitive_features=groups)
    two = FairClusteringEnsemble(c, random_state=0).fit(
        np.vstack([base, base]), sensitive_features=np.concatenate([groups, groups]))
    # doubling every row leaves the auto-weighted problem's answer (nearly) unchanged
    agree = (two.labels_[: len(groups)] == one.labels_).mean()
    assert agree > 0.97
    assert two.fairness_weight_ == pytest.approx(one.fairness_weight_ / 2**1.5)


def test_hungarian_alignment_uses_permutations(pool):
    base, groups, _, c = pool
    est = FairClusteringEnsemble(c, alignment="hungarian", random_state=0).fit(
        base, sensitive_features=groups)
    for R in [*est.rotations_, est.rotation_]:
        assert set(np.unique(R)) <= {0.0, 1.0}
    assert np.all(np.diff(est.objective_) <= 1e-10 * np.abs(est.objective_[:-1]))


def test_different_cluster_numbers_per_base(pool):
    base, groups, _, c = pool
    extra = np.column_stack([base, (base[:, 0] * 2 + (groups > 0)) % 7])  # c_i = 7
    est = FairClusteringEnsemble(c, random_state=0).fit(extra, sensitive_features=groups)
    assert est.rotations_[-1].shape == (7, c)
    assert est.labels_.max() < c


def test_select_n_clusters_finds_the_structure():
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 5, 1000)
    base = np.column_stack([rng.permutation(5)[truth] for _ in range(6)])
    best, scores = select_n_clusters(base, range(2, 9), random_state=0)
    assert best == 5 and max(scores, key=scores.get) == 5
    est = FairClusteringEnsemble("auto", random_state=0).fit(base,
                                                           sensitive_features=truth % 2)
    assert est.n_clusters_ == 5


def test_bad_inputs(pool):
    base, groups, _, c = pool
    with pytest.raises(ValueError, match="different lengths"):
        FairClusteringEnsemble(c).fit([base[:, 0], base[:-1, 1]], sensitive_features=groups)
    with pytest.raises(ValueError, match="1 distinct group"):
        FairClusteringEnsemble(c).fit(base, sensitive_features=np.zeros(len(groups)))
    with pytest.raises(ValueError, match="larger than the number of samples"):
        FairClusteringEnsemble(len(groups) + 1).fit(base, sensitive_features=groups)
    with pytest.raises(ValueError, match="has 600 entries but X has 599"):
        FairClusteringEnsemble(c).fit(base[:-1], sensitive_features=groups)
    with pytest.raises(TypeError, match="must be integers"):
        check_base_labels(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="base_labels is complex: Complex data not supported"):
        check_base_labels(base + 1j)
    for value in (np.nan, np.inf):  # refused by the check, with no numpy warning before it
        bad = base.astype(float)
        bad[5, 1] = value
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match="base_labels contains NaN or inf"):
                check_base_labels(bad)
    with pytest.raises(ValueError, match="fairness_weight must be 'auto' or a finite number >= 0"):
        FairClusteringEnsemble(c, fairness_weight=-1).fit(base, sensitive_features=groups)
    with pytest.raises(ValueError, match="alignment must be one of"):
        FairClusteringEnsemble(c, alignment="greedy").fit(base, sensitive_features=groups)


def _unreadable(shape):
    # a dask array whose every read fails: a check that runs before the data are read passes
    def boom():
        raise AssertionError("the data were read")

    return da.from_delayed(dask.delayed(boom)(), shape=shape, dtype=np.int64)


@pytest.mark.parametrize("params, error, match", [
    ({"n_clusters": "many"}, ValueError, "n_clusters must be 'auto' or an integer >= 1"),
    ({"n_clusters": 2.0}, TypeError, "n_clusters must be 'auto' or an integer >= 1, got 2.0"),
    ({"n_clusters": 0}, ValueError, "n_clusters must be 'auto' or an integer >= 1, got 0"),
    ({"fairness_weight": "high"}, ValueError, "fairness_weight must be 'auto' or a finite"),
    ({"fairness_weight": np.nan}, ValueError, "fairness_weight must be 'auto' or a finite"),
    ({"consensus_weight": 0}, ValueError, "consensus_weight must be a finite number > 0"),
    ({"consensus_weight": np.inf}, ValueError, "consensus_weight must be a finite number"),
    ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1, got 0"),
    ({"tol": -1e-4}, ValueError, "tol must be a finite number >= 0"),
    ({"tol": "small"}, TypeError, "tol must be a finite number >= 0"),
    ({"alignment": "greedy"}, ValueError, "alignment must be one of"),
    ({"init": "svd"}, ValueError, "init must be one of"),
    ({"random_state": "seed"}, TypeError, "random_state must be None"),
    ({"random_state": -1}, ValueError, "random_state must be None or a non-negative integer"),
    ({"min_group_size": 0}, ValueError, "min_group_size must be an integer >= 1"),
    ({"small_groups": "drop"}, ValueError, "small_groups must be one of"),
])
def test_parameters_are_checked_before_the_data_are_read(params, error, match):
    est = FairClusteringEnsemble(**{"n_clusters": 3, **params})
    with pytest.raises(error, match=match):
        est.fit(_unreadable((10, 2)), sensitive_features=_unreadable((10,)))
    assert not [k for k in vars(est) if k.endswith("_")]


def test_a_failed_fit_changes_no_fitted_attribute(pool):
    """The fitted attributes are set together once everything has passed. A fit that fails
    after the groups were read (n_clusters above the rows, no c for "auto", an error during
    the iterations) leaves none; a refit that fails leaves the previous fit's, untouched."""
    base, groups, _, c = pool

    def stop(state):
        raise RuntimeError("interrupted")

    failing = [
        ({"n_clusters": len(groups) + 1}, base, {}, "larger than the number of samples"),
        ({"n_clusters": "auto"}, np.zeros((len(groups), 1), dtype=int), {},
         "n_clusters could not be chosen"),
        ({"n_clusters": c}, base, {"callback": stop}, "interrupted"),
    ]
    for params, labels, kwargs, match in failing:
        est = FairClusteringEnsemble(**params)
        with pytest.raises((ValueError, RuntimeError), match=match):
            est.fit(labels, sensitive_features=groups, **kwargs)
        assert not [k for k in vars(est) if k.endswith("_")], match
    est = FairClusteringEnsemble(c, random_state=0).fit(base, sensitive_features=groups)
    fitted = {k: v for k, v in vars(est).items() if k.endswith("_")}
    assert {"labels_", "groups_", "merged_groups_", "n_clusters_"} <= set(fitted)
    for params, labels, kwargs, match in failing:
        est.set_params(**params)
        with pytest.raises((ValueError, RuntimeError), match=match):
            est.fit(labels, sensitive_features=groups + 1, **kwargs)
        now = {k: v for k, v in vars(est).items() if k.endswith("_")}
        assert now.keys() == fitted.keys()
        assert all(now[k] is v for k, v in fitted.items()), match


def test_fit_predict_is_fit_then_labels(pool, tmp_path):
    # scikit-learn's ClusterMixin.fit_predict, which passes fit's keyword arguments on
    base, groups, _, c = pool
    est = FairClusteringEnsemble(c, random_state=0)
    labels = est.fit_predict(base, sensitive_features=groups, store=tmp_path / "fce.zarr")
    assert labels is est.labels_
    ref = FairClusteringEnsemble(c, random_state=0).fit(base, sensitive_features=groups)
    np.testing.assert_array_equal(labels, ref.labels_)


def test_base_clusterings_as_tasks(client):
    rng = np.random.default_rng(6)
    centers = rng.normal(scale=6, size=(3, 4))
    truth = rng.integers(0, 3, 900)
    X = centers[truth] + rng.normal(size=(900, 4))
    labels = base_clusterings(X, n_clusters=3, n_runs=8,
                              methods=("kmeans", "minibatch", "spectral", "agglomerative"),
                              random_state=0, client=client)
    assert labels.shape == (900, 8) and labels.max() < 3
    from sklearn.metrics import adjusted_rand_score

    for r in range(8):  # well separated blobs: every method finds them
        assert adjusted_rand_score(truth, labels[:, r]) > 0.9
    again = base_clusterings(X, n_clusters=3, n_runs=8,
                             methods=("kmeans", "minibatch", "spectral", "agglomerative"),
                             random_state=0, client=client)
    np.testing.assert_array_equal(again, labels)
    lazy = base_clusterings(da.from_array(X, chunks=(200, 4)), n_clusters=3, n_runs=8,
                            methods=("kmeans", "minibatch", "spectral", "agglomerative"),
                            random_state=0, sample_size=900, client=client)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), labels)
    rnd = base_clusterings(X, n_clusters=3, n_runs=20, random_cluster_numbers=True,
                           random_state=1, client=client)
    ks = rnd.max(axis=0) + 1
    assert ks.min() >= 3 and ks.max() <= 6 and len(set(ks)) > 1
    with pytest.raises(ValueError,
                       match="methods must be a non-empty list of values, each one of"):
        base_clusterings(X, n_clusters=3, methods=("dbscan",), client=client)
    with pytest.raises(ValueError, match="larger than the number of samples"):
        base_clusterings(X[:2], n_clusters=3, client=client)


def test_base_clusterings_read_x_once_plus_the_sample_blocks(client):
    """All rows in the sample: X is read once (the fits' rows are assigned in memory); a
    smaller sample: once, plus the seeded subset of blocks it is drawn from (8 of 20)."""
    import collections

    from daskfair.nystroem import MIN_LANDMARK_BLOCKS

    from ._counting import counted

    rng = np.random.default_rng(3)
    X = rng.normal(size=(64 * 20, 3))
    for sample_size, twice in ((10_000, 0), (100, MIN_LANDMARK_BLOCKS)):
        counts = collections.Counter()
        # the synchronous scheduler computes X here, where the counter is (the fits still
        # run on the client's workers)
        with dask.config.set({"daskfair.block-rows": 64, "scheduler": "sync"}):
            labels = base_clusterings(counted(X, counts), n_clusters=3, n_runs=4,
                                      sample_size=sample_size, random_state=0, client=client)
            labels = labels.compute()
            in_memory = base_clusterings(X, n_clusters=3, n_runs=4, sample_size=sample_size,
                                         random_state=0, client=client)
        assert sorted(counts) == list(range(20))
        assert sum(v == 2 for v in counts.values()) == twice
        assert set(counts.values()) <= {1, 2}
        np.testing.assert_array_equal(labels, in_memory)


def _base_fit(M, sizes, R):
    """‖H − Y(i)R‖² − c for M = Y(i)ᵀH: −2 tr(RᵀM) + Σ_k n_k ‖R_k‖²."""
    return -2.0 * (M * R).sum() + (sizes * (R**2).sum(axis=1)).sum()


@pytest.mark.parametrize("c_i", [2, 4, 7])
def test_base_alignment_never_raises_the_objective(c_i):
    rng = np.random.default_rng(c_i)
    c = 4
    for _ in range(50):
        n = rng.integers(20, 200)
        labels = rng.integers(0, c_i, size=n)
        labels[:c_i] = np.arange(c_i)  # every cluster non-empty
        Y = np.eye(c_i)[labels]
        H = _random_orthogonal(rng, n, c)
        M, sizes = Y.T @ H, Y.sum(axis=0)
        previous = _random_orthogonal(rng, c_i, c)
        R = align_base(M, sizes, previous)
        dense = ((H - Y @ R) ** 2).sum() - c
        assert _base_fit(M, sizes, R) == pytest.approx(dense, abs=1e-9)
        assert _base_fit(M, sizes, R) <= _base_fit(M, sizes, previous) + 1e-9
        # orthonormal rows (c_i <= c) or columns (c_i > c)
        np.testing.assert_allclose(R @ R.T if c_i <= c else R.T @ R, np.eye(min(c_i, c)),
                                   atol=1e-12)
        # never worse than any of many random feasible R(i) when c_i <= c (exact), and a
        # stationary point on the Stiefel manifold when c_i > c
        if c_i <= c:
            best = _base_fit(M, sizes, R)
            assert all(_base_fit(M, sizes, _random_orthogonal(rng, c_i, c)) >= best - 1e-9
                       for _ in range(200))
        else:
            # run long enough, the iterates reach a stationary point of the Stiefel manifold
            R = align_base(M, sizes, previous, max_iter=20_000, rtol=0.0)
            G = sizes[:, None] * R - M  # half the Euclidean gradient
            riemannian = G - R @ (0.5 * (R.T @ G + G.T @ R))
            assert np.abs(riemannian).max() <= 1e-5 * np.abs(M).max()
        # Hungarian: the best partial permutation for every c_i, by enumeration
        P = align_base(M, sizes, previous, "hungarian")
        cands = []
        for pick in itertools.permutations(range(max(c_i, c)), min(c_i, c)):
            Q = np.zeros((c_i, c))
            rows, cols = (np.arange(c_i), pick) if c_i <= c else (pick, np.arange(c))
            Q[rows, cols] = 1.0
            cands.append(Q)
        assert _base_fit(M, sizes, P) == pytest.approx(
            min(_base_fit(M, sizes, Q) for Q in cands), abs=1e-9)


@pytest.mark.parametrize("alignment", ["rotation", "hungarian"])
def test_objective_never_increases_for_base_clusterings_with_fewer_and_more_clusters(
        alignment):
    # c = 4; base clusterings with 2, 3, 4, 5 and 7 clusters (random_cluster_numbers=True,
    # n_clusters=None). The seed's polar step for c_i > c raises this objective.
    rng = np.random.default_rng(7)
    n, c = 900, 4
    truth = rng.integers(0, 7, size=n)
    groups = (rng.random(n) < 0.3 + 0.08 * truth).astype(int)
    base = np.column_stack([np.where(rng.random(n) < 0.7, truth % k, rng.integers(0, k, n))
                            for k in (2, 3, 4, 5, 7, 7, 5, 4)])
    for seed in range(3):
        est = FairClusteringEnsemble(c, fairness_weight=auto_fairness(n, c, 2), tol=0, max_iter=25,
                                     alignment=alignment, random_state=seed)
        obj = est.fit(base, sensitive_features=groups).objective_
        assert np.all(np.diff(obj) <= 1e-12 * np.abs(obj[:-1])), np.diff(obj).max()


def test_held_copy_and_row_blocks_rules():
    """The int32 copy is held when it takes at most a quarter of the cluster's memory, and
    the consensus keeps an input's row blocks unless one is over 4× or (not last) under ¼ of
    the block size."""
    import distributed

    from daskfair.ensemble.labels import _fits_in_memory, _row_chunks

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  memory_limit="100MB", dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        assert _fits_in_memory(50 * 10**6)
        assert not _fits_in_memory(51 * 10**6)
    assert _row_chunks((100, 250, 30, 7), 100) == (100, 250, 30, 7)
    assert _row_chunks((401, 100), 100) == (100, 100, 100, 100, 100, 1)
    assert _row_chunks((100, 24, 100), 100) == (100, 100, 24)


def test_labels_of_any_numbering_give_the_result_of_the_renumbered_labels(pool, several_blocks):
    """Each labeling's ids renumbered in increasing order: -1 (DBSCAN's noise), sparse and huge
    ids, ids up to n - 1 give the bits of the labels 0 .. c_i - 1, numpy and dask alike."""
    base, groups, _, c = pool
    n = len(base)
    ranks = np.column_stack([np.unique(col, return_inverse=True)[1] for col in base.T])
    fit = FairClusteringEnsemble(c, random_state=0, max_iter=5)
    want = fit.fit(ranks, sensitive_features=groups).labels_
    for ids in (base - 1, base * 10**9 + 7, np.where(base == base.max(), n - 1, base),
                (base * 2**40).astype(np.float64), base.astype(np.uint8)):
        codes, sizes = check_base_labels(ids)
        np.testing.assert_array_equal(codes, ranks)
        assert codes.dtype == np.int32 and list(sizes) == [len(np.unique(c)) for c in ids.T]
        np.testing.assert_array_equal(fit.fit(ids, sensitive_features=groups).labels_, want)
        lazy = da.from_array(ids, chunks=(97, 3))  # several row and column blocks
        held, held_sizes = hold_base_labels(lazy)
        np.testing.assert_array_equal(np.asarray(held), ranks)
        np.testing.assert_array_equal(held_sizes, sizes)
        np.testing.assert_array_equal(
            fit.fit(lazy, sensitive_features=da.from_array(groups, chunks=97)).labels_.compute(),
            want)


def test_labelings_with_too_many_clusters_in_all_are_refused(monkeypatch):
    from daskfair.ensemble import labels

    monkeypatch.setattr(labels, "MAX_TOTAL_CLUSTERS", 100)
    rows = np.arange(60)
    with pytest.raises(ValueError, match=r"have 120 clusters in all \(labeling 0 alone 60\).*"
                                         r"features rather than labels"):
        check_base_labels(np.column_stack([rows, rows]))


def test_labels_that_change_between_reads_are_refused_before_the_kernels():
    """A dask input not held in memory is read again for every pass; a value it did not
    hold at the first read would index the kernels' tables out of bounds."""
    from daskfair.ensemble.labels import _codes

    values = [np.array([0, 1, 2]), np.array([5, 10**9])]
    np.testing.assert_array_equal(_codes(np.array([[2, 10**9], [0, 5]]), values),
                                  [[2, 1], [0, 0]])
    for block in (np.array([[3, 5]]), np.array([[-1, 5]]), np.array([[0, 6]])):
        with pytest.raises(ValueError, match="changed between two reads"):
            _codes(block, values)


def test_distinct_ids_counted_in_one_pass_are_numpys():
    """The one-pass count of small ids (ensemble._block_functions.count_ids) against
    numpy.unique, for every integer dtype, gaps, huge and negative ids (sorted instead)."""
    from daskfair.ensemble.labels import _column_values

    rng = np.random.default_rng(5)
    base = rng.integers(0, 7, (500, 4))
    base[:, 1] *= 3  # gaps: ids 0, 3, ..., 18
    base[:, 2] = 0  # one cluster
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64, np.float32):
        block = base.astype(dtype)
        for got, col in zip(_column_values(block), block.T, strict=True):
            np.testing.assert_array_equal(got, np.unique(col))
            assert got.dtype == dtype
    for ids in (base - 1, base * 10**9, np.asfortranarray(base)):  # sorted, not counted
        for got, col in zip(_column_values(ids), ids.T, strict=True):
            np.testing.assert_array_equal(got, np.unique(col))
