"""Fitted models that ship: saved as arrays and JSON, loaded without running code, and used
to predict tables of any size."""

from .io import CLASSES, load, read_model, save, write_model
from .scoring import predict_table
from .tree import UnsafeModelError

__all__ = ["CLASSES", "UnsafeModelError", "load", "predict_table", "read_model", "save",
           "write_model"]
