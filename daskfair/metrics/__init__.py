"""Fairness and clustering metrics for numpy, pandas or dask inputs, each in one pass."""

from ._audit_stats import COUNT_METRICS
from ._audit_stats import RATES as AUDIT_RATES
from ._score_tables import Calibration
from .audit_levels import LevelAudit
from .audit_pass import audit
from .audit_result import Audit
from .clustering import (
    REPORT_COLUMNS,
    balance,
    cce,
    clustering_accuracy,
    clustering_report,
    contingency,
    fairness_cce,
    hypervolume_2d,
    kmeans_cost,
    mnce,
    nmi,
    normalized_entropy,
)
from .fairness import (
    GROUP_REPORT_COLUMNS,
    GroupReport,
    WorstPair,
    demographic_parity_difference,
    equalized_odds_difference,
    error_rate,
    group_report,
    mean_prediction_gap,
    regression_report,
)
from .regression_audit import REGRESSION_METRICS, RegressionAudit
from .report import audit_html

__all__ = [
    "AUDIT_RATES",
    "COUNT_METRICS",
    "GROUP_REPORT_COLUMNS",
    "REGRESSION_METRICS",
    "REPORT_COLUMNS",
    "Audit",
    "Calibration",
    "GroupReport",
    "LevelAudit",
    "RegressionAudit",
    "WorstPair",
    "audit",
    "audit_html",
    "balance",
    "cce",
    "clustering_accuracy",
    "clustering_report",
    "contingency",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "error_rate",
    "fairness_cce",
    "group_report",
    "hypervolume_2d",
    "kmeans_cost",
    "mean_prediction_gap",
    "mnce",
    "nmi",
    "normalized_entropy",
    "regression_report",
]
