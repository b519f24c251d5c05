"""Model selection under a disparity bound: every candidate from one pass, scored in one more.

:class:`FairKernelClassifierCV` and :class:`FairKernelRegressorCV` (scikit-learn's
``RidgeCV``/``LogisticRegressionCV`` are the models) split the rows into folds by a seeded
hash of their position (:func:`~daskfair.fkr.statistics.fold_of`). One pass returns every
fold's moments; every candidate of every fold is then a small solve on the client
(:mod:`~daskfair.fkr.candidates`), and the refit on all rows comes from the total moments for
free. The classifier needs one more pass: every row's validation score under every candidate
of its fold, counted in histograms (:mod:`~daskfair.fkr.scores`), which give the error and
the disparity of every threshold of every candidate. The regressor needs none: squared error
and the groups' mean predictions on a fold are functions of that fold's moments.

The selected model is the most accurate candidate whose validation disparity is within
``disparity_bound`` (the fairest, with a warning, when none is); ``frontier_`` lists every
candidate with its validation disparity and error.
"""

from __future__ import annotations

import logging
import warnings
from numbers import Integral, Real
from typing import Any

import dask.array as da
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._random import as_seed_sequence, child_rng
from ._base import CalibratedClassifierMixin, FitInput, KernelModelMixin, shown
from .candidates import CONSTRAINTS, FAMILIES, Linear, Search, build_candidates
from .candidates import embedding_components as _components
from .ridge import penalty_scale
from .scores import ScoreModel, platt_scaling, score_histograms, threshold_table
from .statistics import FoldedMoments, Moments

__all__ = ["FairKernelClassifierCV", "FairKernelRegressorCV"]

logger = logging.getLogger(__name__)

N_BINS = 256
DEFAULT_ALPHAS = (1e-6, 1e-5, 1e-4, 1e-3)


class _CVMixin(KernelModelMixin):
    """The fold pass, the candidates of every fold and the choice under the bound."""

    def _check_cv_params(self) -> None:
        if not (isinstance(self.cv, Integral) and not isinstance(self.cv, bool)
                and 2 <= self.cv <= 50):
            raise ValueError(f"cv must be an integer in [2, 50], got {self.cv!r}.")
        if not (isinstance(self.disparity_bound, Real) and self.disparity_bound >= 0):
            raise ValueError(
                f"disparity_bound must be a number >= 0, got {self.disparity_bound!r}.")
        families = (self.families,) if isinstance(self.families, str) else tuple(self.families)
        if not families or any(f not in FAMILIES for f in families):
            raise ValueError(f"families must be a subset of {FAMILIES}, got {self.families!r}.")
        alphas = DEFAULT_ALPHAS if self.alphas is None else tuple(np.atleast_1d(self.alphas))
        if not alphas or not all(a >= 0 for a in alphas):
            raise ValueError(f"alphas must be numbers >= 0, got {self.alphas!r}.")
        self._gammas()

    def _search(self, total: Moments, task: str, constraint: str) -> Search:
        families = (self.families,) if isinstance(self.families, str) else tuple(self.families)
        alphas = DEFAULT_ALPHAS if self.alphas is None else tuple(
            float(a) for a in np.atleast_1d(self.alphas))
        if self.strengths is None:
            strengths = tuple(np.linspace(0, 3, 31) if task == "classification"
                              else np.linspace(0, 1.2, 25))
        else:
            strengths = tuple(float(t) for t in np.atleast_1d(self.strengths))
        r = total.sums.shape[1]
        components = self.n_components
        if components is None:
            components = sorted({max(1, r // 8), max(1, r // 4), max(1, r // 2)})
        fairness = (None,) if self.fairness is None else tuple(
            None if g is None else float(g) for g in np.atleast_1d(
                np.asarray(self.fairness, dtype=object)))
        search = Search(task=task, constraint=constraint, families=families, alphas=alphas,
                        strengths=strengths, components=tuple(np.atleast_1d(components)),
                        fairness=fairness)
        if "embedding" in families:
            search = Search(**{**search.__dict__, "components": _components(total, search)})
        return search

    def _gammas(self) -> list[float | None]:
        """The kernel coefficients searched (one pass, or two for the classifier, each)."""
        if self.gamma is None or isinstance(self.gamma, Real):
            return [self.gamma]
        gammas = [None if g is None else float(g) for g in self.gamma]
        if not gammas or any(g is not None and not g > 0 for g in gammas):
            raise ValueError(f"gamma must be a positive number, None or a list of them, got "
                             f"{self.gamma!r}.")
        return gammas

    def _runs(self, data: FitInput, seed: int) -> list[dict[str, Any]]:
        """The search of every kernel setting, on one draw of landmarks."""
        runs, landmarks = [], None
        for gamma in self._gammas():
            runs.append(self._search_kernel(data, gamma, seed, landmarks))
            landmarks, data = runs[-1]["fmap"].landmarks, runs[-1]["data"]
        return runs

    def _combine(self, runs: list[dict[str, Any]]) -> None:
        """Candidates of every kernel setting side by side."""
        self.feature_maps_ = [run["fmap"] for run in runs]
        self.moments_ = [run["total"] for run in runs]
        self._table = pd.concat([run["table"] for run in runs], ignore_index=True)
        self.candidate_kernel_ = np.concatenate(
            [np.full(len(run["table"]), i) for i, run in enumerate(runs)])
        self.candidate_dual_coef_ = np.hstack([run["dual"] for run in runs])
        self.candidate_intercept_ = np.concatenate([run["intercept"] for run in runs])
        self.cv_disparity_ = np.vstack([run["disparity"] for run in runs])
        self.cv_error_ = np.vstack([run["error"] for run in runs])
        self.n_candidates_ = len(self._table)

    def _check_folds(self, folded: FoldedMoments, data: FitInput) -> None:
        """Every fold's training rows must hold every group (and both classes)."""
        for f in range(folded.n_folds):
            train = folded.train(f)
            counts = train.group_counts
            if data.groups is not None and (counts <= 0).any():
                g = int(np.argmin(counts))
                raise ValueError(
                    f"group {shown(data.groups[g])} has no rows in the training rows of fold "
                    f"{f} (it has {folded.total.group_counts[g]:g} rows in all): "
                    "every fold's training rows need every group. Use fewer folds (cv=...) "
                    "or merge the small groups.")
            if (data.cell_label >= 0).all():
                weight = np.bincount(data.cell_label, weights=train.counts, minlength=2)
                if (weight <= 0).any():
                    raise ValueError(
                        f"the training rows of fold {f} hold one class only; use fewer folds "
                        "(cv=...).")

    def _fold_seed(self) -> int:
        return int(child_rng(as_seed_sequence(self.random_state), 1).integers(2**32))

    def _candidates(self, folded: FoldedMoments, search: Search
                    ) -> tuple[pd.DataFrame, list[Linear], Linear]:
        per_fold = []
        for f in range(folded.n_folds):
            train = folded.train(f)
            rows, lin = build_candidates(train, search, penalty_scale(train))
            per_fold.append(lin)
        total = folded.total
        rows, refit = build_candidates(total, search, penalty_scale(total))
        logger.info("%d candidates per fold, %d folds", refit.mix.shape[1], folded.n_folds)
        return pd.DataFrame(rows), per_fold, refit

    def _choose(self, disparity: np.ndarray, error: np.ndarray) -> tuple[int, ...]:
        """Index of the most accurate entry within the bound (fairest if none is)."""
        bound = self.disparity_bound + 1e-12
        d, e = disparity.ravel(), error.ravel()
        d_ok = np.where(np.isfinite(d), d, np.inf)
        e_ok = np.where(np.isfinite(e), e, np.inf)
        feasible = np.isfinite(e) & (d <= bound)
        if feasible.any():
            order = np.lexsort((np.where(feasible, d_ok, np.inf),
                                np.where(feasible, e_ok, np.inf)))
        else:
            warnings.warn(
                f"no candidate reaches a validation disparity of {self.disparity_bound:g} (the "
                f"fairest reaches {d_ok.min():.4g}); the fairest candidate is used. Widen the "
                "search (larger strengths, more components) or raise disparity_bound.",
                UserWarning, stacklevel=3)
            order = np.lexsort((e_ok, d_ok))
        return tuple(int(i) for i in np.unravel_index(order[0], disparity.shape))


def _pareto(disparity: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Mask of the points no other point beats in both (ties kept once)."""
    order = np.lexsort((error, disparity))
    keep = np.zeros(len(order), dtype=bool)
    best = np.inf
    for i in order:
        if error[i] < best:
            keep[i] = True
            best = error[i]
    return keep


def _score_moments(stats: Moments, lin: Linear) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of every candidate's score over the rows of ``stats``."""
    coef = lin.coef
    mean = stats.mean @ coef + lin.intercept
    var = ((stats.covariance() @ coef) * coef).sum(axis=0)
    std = np.sqrt(np.maximum(var, 0.0))
    return mean, np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std,
                          np.maximum(np.abs(mean), 1.0))


class FairKernelClassifierCV(_CVMixin, CalibratedClassifierMixin, ClassifierMixin,
                             BaseEstimator):
    """The most accurate fair kernel classifier within a disparity bound, chosen by CV.

    Reads the training data twice per kernel setting, whatever the number of candidates and
    folds: one pass for
    the moments of every fold (:mod:`~daskfair.fkr.statistics`), one for every candidate's
    validation scores. Candidates (:mod:`~daskfair.fkr.candidates`):

    * ``"reduction"``: the decision-level reduction of demographic parity or equalized odds
      (Agarwal et al. 2018) with least-squares posteriors on the kernel features: for every
      ridge penalty α and strength t, the score η̂(x) − ½ Σ λ_c(t) φ̂_c(x); t = 0 is
      unconstrained kernel ridge.
    * ``"embedding"``: FKR-F²E, ridge on k mean-matched fair features, for every (k, γ, α).

    Every candidate is scored at 257 thresholds on the validation rows, so the threshold is
    chosen too. The sensitive attribute is needed to fit, never to predict.

    Parameters
    ----------
    kernel, degree, coef0
        The kernel, as in :class:`~daskfair.FairKernelRegressor`.
    gamma : float, None or sequence
        The kernel coefficient (None: 1/n_features), or several: each is searched with its
        own two passes and competes with the others (the chosen one is in ``best_params_``).
    disparity_bound : float
        The largest validation disparity accepted: demographic parity difference (the seed's
        statistical disparity; largest gap in positive rate between groups) or equalized
        odds difference (largest gap in true- or false-positive rate).
    constraints : {"demographic_parity", "equalized_odds"}
    families : sequence of {"reduction", "embedding"}
        Candidate families searched.
    alphas : sequence of float, optional
        Relative ridge penalties (default 1e-6, 1e-5, 1e-4, 1e-3; see
        :class:`~daskfair.FairKernelRegressor`).
    strengths : sequence of float, optional
        Reduction strengths t (default 31 values in [0, 3]; t = 1 equalises the groups'
        mean scores on the training rows).
    n_components : sequence of int, optional
        Fair features k of the embedding family (default r/8, r/4, r/2 of the feature map's
        rank r).
    fairness : sequence of (float or None)
        γ of the embedding family (None: exact mean constraint); default (None, 1.0).
    cv : int
        Folds (rows assigned by a seeded hash of their position).
    refit : bool
        Keep the selected candidate refitted on all rows (free: the total moments) for
        ``predict``; with False only the frontier is kept.
    n_landmarks, landmarks, rcond, approximation
        The Nyström map, as in :class:`~daskfair.FairKernelRegressor`.
    random_state : int, SeedSequence or None
        Seeds the landmarks and the folds.

    Attributes
    ----------
    frontier_ : pandas.DataFrame
        One row per candidate and threshold on that candidate's own disparity/error front:
        the family and parameters, ``threshold``, validation ``disparity`` and ``error``,
        ``pareto`` (on the front of all candidates) and ``selected``.
    best_params_ : dict
        The selected candidate's parameters and threshold.
    best_error_, best_disparity_ : float
        Its validation error and disparity.
    dual_coef_, intercept_, threshold_ : the refitted score k(x, L)·dual_coef_ + intercept_
        and the threshold above which ``classes_[1]`` is predicted.
    calibration_ : tuple of float
        (a, c): ``predict_proba`` is σ(a·score + c), fitted on the validation scores with
        probability 1/2 at the threshold.
    classes_, feature_map_, groups_, n_features_in_, feature_names_in_
        As in :class:`~daskfair.FairKernelClassifier`.
    feature_maps_, moments_ : list
        Per kernel setting searched: the Nyström map and the moments of all training rows
        (:class:`~daskfair.fkr.statistics.Moments`), from which
        :meth:`FairKernelRidge.fit_moments` gives kernel ridge and FKRR with no pass.
    """

    def __init__(
        self,
        kernel: str = "rbf",
        *,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        disparity_bound: float = 0.01,
        constraints: str = "demographic_parity",
        families: Any = ("reduction", "embedding"),
        alphas: Any = None,
        strengths: Any = None,
        n_components: Any = None,
        fairness: Any = (None, 1.0),
        cv: int = 5,
        refit: bool = True,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.disparity_bound = disparity_bound
        self.constraints = constraints
        self.families = families
        self.alphas = alphas
        self.strengths = strengths
        self.n_components = n_components
        self.fairness = fairness
        self.cv = cv
        self.refit = refit
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.rcond = rcond
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelClassifierCV:
        """Search the candidates on ``cv`` folds and refit the chosen one on all rows."""
        self._check_cv_params()
        if self.constraints not in CONSTRAINTS:
            raise ValueError(f"constraints must be one of {CONSTRAINTS}, got "
                             f"{self.constraints!r}.")
        data = self._fit_input(X, y, sensitive_features, sample_weight, classify=True)
        seed = self._fold_seed()
        runs = self._runs(data, seed)
        self._combine(runs)
        self.thresholds_ = np.vstack([run["thresholds"] for run in runs])
        self._hist = np.concatenate([run["hist"] for run in runs])
        self._bins = (np.concatenate([run["lo"] for run in runs]),
                      np.concatenate([run["width"] for run in runs]))
        self._cell_label = runs[0]["data"].cell_label
        return self._select()

    def _search_kernel(self, data: FitInput, gamma: float | None, seed: int,
                       landmarks: np.ndarray | None) -> dict[str, Any]:
        """Both passes for one kernel setting: the candidates and their validation scores."""
        fmap = self._fit_feature_map(data, gamma, landmarks)
        folded, data = self._moments(data, fmap, n_folds=self.cv, fold_seed=seed)
        self._check_folds(folded, data)
        total = folded.total
        search = self._search(total, "classification", self.constraints)
        table, per_fold, refit = self._candidates(folded, search)
        table.insert(1, "gamma", fmap.params["gamma"])
        mean, std = _score_moments(total, refit)
        lo, width = mean - 6 * std, 12 * std / N_BINS
        T = fmap.whitening
        model = ScoreModel(
            basis=np.stack([T @ lin.basis for lin in per_fold]),
            offset=np.stack([lin.offset for lin in per_fold]),
            mix=np.stack([lin.mix for lin in per_fold]),
            shift=np.stack([lin.shift for lin in per_fold]),
            lo=lo, width=width, n_bins=N_BINS)
        hist = score_histograms(data.X, data.cells, data.weights, fmap.landmarks, fmap.params,
                                model, n_cells=len(data.cell_group), fold_seed=seed)
        scores = threshold_table(hist, data.cell_group, data.cell_label)
        disparity = (scores.equalized_odds if self.constraints == "equalized_odds"
                     else scores.demographic_parity)
        return {"fmap": fmap, "data": data, "total": total, "table": table,
                "dual": T @ refit.coef,
                "intercept": refit.intercept, "thresholds": model.edges(),
                "disparity": disparity, "error": scores.error, "hist": hist, "lo": lo,
                "width": width}

    def _select(self) -> FairKernelClassifierCV:
        k, j = self._choose(self.cv_disparity_, self.cv_error_)
        edges = self.thresholds_
        self.frontier_ = _frontier(self._table, edges, self.cv_disparity_, self.cv_error_,
                                   (k, j))
        self.best_params_ = {**_params(self._table, k), "threshold": float(edges[k, j])}
        self.best_error_ = float(self.cv_error_[k, j])
        self.best_disparity_ = float(self.cv_disparity_[k, j])
        if self.refit:
            self.feature_map_ = self.feature_maps_[self.candidate_kernel_[k]]
            self.dual_coef_ = self.candidate_dual_coef_[:, k]
            self.intercept_ = float(self.candidate_intercept_[k])
            lo, width = self._bins
            by_class = np.zeros((2, N_BINS))
            np.add.at(by_class, self._cell_label, self._hist[k])
            centers = lo[k] + width[k] * (np.arange(N_BINS) + 0.5)
            slope, _ = platt_scaling(by_class, centers, slope_only_at=float(edges[k, j]))
            self._set_calibration(slope, float(edges[k, j]), width[k] * N_BINS / 12)
        return self

    def choose(self, disparity_bound: float) -> FairKernelClassifierCV:
        """Select again under another bound, from the stored validation scores (no pass).

        Every candidate was refitted on all rows during ``fit``, so this only sets
        ``disparity_bound``, the choice and the model.
        """
        check_is_fitted(self, "cv_error_")
        self.disparity_bound = disparity_bound
        self._check_cv_params()
        return self._select()

    def plot_frontier(self, ax: Any = None) -> Any:
        """The validation disparity/error of every candidate, the front and the choice."""
        return _plot_frontier(self, ax, "error")


class FairKernelRegressorCV(_CVMixin, RegressorMixin, BaseEstimator):
    """The most accurate fair kernel regressor within a mean-prediction gap, chosen by CV.

    One pass: the validation squared error and the groups' mean predictions of every
    candidate on every fold are functions of the folds' moments. Candidates as in
    :class:`FairKernelClassifierCV`, with the label's ridge regression as the base of the
    reduction (t = 1 equalises the groups' mean predictions on the training rows).

    Parameters
    ----------
    disparity_bound : float
        The largest accepted validation gap between the groups' mean predictions (in the
        units of y).
    strengths : sequence of float, optional
        Default 25 values in [0, 1.2].
    kernel, gamma, degree, coef0, families, alphas, n_components, fairness, cv, refit,
    approximation, n_landmarks, landmarks, rcond, random_state
        As in :class:`FairKernelClassifierCV` (each gamma one pass).

    Attributes
    ----------
    frontier_ : pandas.DataFrame
        Every candidate: parameters, validation ``disparity`` (mean gap) and ``error``
        (RMSE), ``pareto`` and ``selected``.
    best_params_, best_error_, best_disparity_, dual_coef_, intercept_, feature_map_,
    groups_, n_features_in_, feature_names_in_
        As in :class:`FairKernelClassifierCV`.
    """

    def __init__(
        self,
        kernel: str = "rbf",
        *,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        disparity_bound: float = 0.01,
        families: Any = ("reduction", "embedding"),
        alphas: Any = None,
        strengths: Any = None,
        n_components: Any = None,
        fairness: Any = (None, 1.0),
        cv: int = 5,
        refit: bool = True,
        approximation: str = "nystroem",
        n_landmarks: int = 1000,
        landmarks: str = "uniform",
        rcond: float = 1e-10,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.disparity_bound = disparity_bound
        self.families = families
        self.alphas = alphas
        self.strengths = strengths
        self.n_components = n_components
        self.fairness = fairness
        self.cv = cv
        self.refit = refit
        self.approximation = approximation
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.rcond = rcond
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> FairKernelRegressorCV:
        """Search the candidates on ``cv`` folds (one pass) and refit the chosen one."""
        self._check_cv_params()
        data: FitInput = self._fit_input(X, y, sensitive_features, sample_weight,
                                         classify=False)
        seed = self._fold_seed()
        self._combine(self._runs(data, seed))
        return self._select()

    def _search_kernel(self, data: FitInput, gamma: float | None, seed: int,
                       landmarks: np.ndarray | None) -> dict[str, Any]:
        """The pass for one kernel setting; validation metrics from the folds' moments."""
        fmap = self._fit_feature_map(data, gamma, landmarks)
        folded, data = self._moments(data, fmap, n_folds=self.cv, fold_seed=seed)
        self._check_folds(folded, data)
        search = self._search(folded.total, "regression", "demographic_parity")
        table, per_fold, refit = self._candidates(folded, search)
        table.insert(1, "gamma", fmap.params["gamma"])
        sse = np.zeros(len(table))
        group_sum = np.zeros((folded.total.n_groups, len(table)))
        for f, lin in enumerate(per_fold):
            held = folded.folds[f]
            coef, b = lin.coef, lin.intercept
            # Σ (zᵀβ + b − y)² over the fold, from its moments
            sse += (((held.gram @ coef) * coef).sum(axis=0)
                    + 2 * b * (held.sums.sum(axis=0) @ coef) + held.n * b**2
                    - 2 * (held.total_fy @ coef) - 2 * b * held.total_y
                    + held.sum_yy.sum())
            group_sum += held.group_sums @ coef + np.outer(held.group_counts, b)
        error = np.sqrt(np.maximum(sse, 0.0) / folded.total.n)
        means = group_sum / folded.total.group_counts[:, None]
        return {"fmap": fmap, "data": data, "total": folded.total, "table": table,
                "dual": fmap.whitening @ refit.coef,
                "intercept": refit.intercept,
                "disparity": (means.max(axis=0) - means.min(axis=0))[:, None],
                "error": error[:, None]}

    def _select(self) -> FairKernelRegressorCV:
        k, _ = self._choose(self.cv_disparity_, self.cv_error_)
        self.frontier_ = _frontier(self._table, None, self.cv_disparity_, self.cv_error_,
                                   (k, 0))
        self.best_params_ = _params(self._table, k)
        self.best_error_ = float(self.cv_error_[k, 0])
        self.best_disparity_ = float(self.cv_disparity_[k, 0])
        if self.refit:
            self.feature_map_ = self.feature_maps_[self.candidate_kernel_[k]]
            self.dual_coef_ = self.candidate_dual_coef_[:, k]
            self.intercept_ = float(self.candidate_intercept_[k])
        return self

    def choose(self, disparity_bound: float) -> FairKernelRegressorCV:
        """Select again under another bound, from the stored validation scores (no pass)."""
        check_is_fitted(self, "cv_error_")
        self.disparity_bound = disparity_bound
        self._check_cv_params()
        return self._select()

    def predict(self, X: Any) -> np.ndarray | da.Array:
        """Predictions of shape (n_samples,); lazy for dask input."""
        return self._kernel_output(X)

    def plot_frontier(self, ax: Any = None) -> Any:
        """The validation mean gap/RMSE of every candidate, the front and the choice."""
        return _plot_frontier(self, ax, "RMSE")


def _params(table: pd.DataFrame, k: int) -> dict[str, Any]:
    """Candidate k's parameters, without the ones its family does not have."""
    return {c: (v.item() if hasattr(v, "item") else v) for c, v in table.iloc[k].items()
            if v is not None and not (isinstance(v, float) and np.isnan(v))}


def _frontier(table: pd.DataFrame, edges: np.ndarray | None, disparity: np.ndarray,
              error: np.ndarray, chosen: tuple[int, ...]) -> pd.DataFrame:
    """Each candidate's own front over its thresholds, with the global front and the choice."""
    parts = []
    for k in range(len(table)):
        d, e = disparity[k], error[k]
        ok = np.isfinite(d) & np.isfinite(e)
        idx = np.flatnonzero(ok)[_pareto(d[ok], e[ok])]
        if k == chosen[0] and chosen[1] not in idx:
            idx = np.sort(np.r_[idx, chosen[1]])
        part = pd.DataFrame({"candidate": k, "threshold_index": idx, "disparity": d[idx],
                             "error": e[idx]})
        if edges is not None:
            part.insert(2, "threshold", edges[k, idx])
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out = table.reset_index(drop=True).iloc[out["candidate"]].reset_index(drop=True).join(out)
    out["pareto"] = _pareto(out["disparity"].to_numpy(), out["error"].to_numpy())
    out["selected"] = ((out["candidate"] == chosen[0])
                       & (out["threshold_index"] == chosen[1]))
    if edges is None:
        out = out.drop(columns="threshold_index")
    return out


def _plot_frontier(est: Any, ax: Any, error_name: str) -> Any:
    check_is_fitted(est, "frontier_")
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    fr = est.frontier_
    for family, part in fr.groupby("family"):
        ax.scatter(part["disparity"], part["error"], s=6, alpha=0.35, label=family)
    front = fr[fr["pareto"]].sort_values("disparity")
    ax.step(front["disparity"], front["error"], where="post", color="black", lw=1,
            label="front")
    best = fr[fr["selected"]]
    ax.scatter(best["disparity"], best["error"], marker="*", s=140, color="crimson",
               zorder=3, label="selected")
    ax.axvline(est.disparity_bound, color="grey", ls="--", lw=1)
    ax.set_xlabel("validation disparity")
    ax.set_ylabel(f"validation {error_name}")
    ax.legend(fontsize=8)
    return ax
