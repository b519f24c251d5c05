"""Run stores: one zarr v3 group per run, one writer at a time, complete or said not to be.

:mod:`.access` creates, opens and resumes runs; :mod:`.run` is the :class:`Run` itself;
:mod:`.lease` the one-writer rule, :mod:`.contents` what a path holds and what may be
removed, :mod:`.integrity` the completion manifest and its check.
"""

from .access import check_new_store, create_run, open_run, resume_run
from .errors import CorruptStoreError, IncompleteRunError, StoreError, StoreLockedError
from .lease import break_lock
from .run import STORE_FORMAT, Run, to_json

__all__ = [
    "STORE_FORMAT",
    "CorruptStoreError",
    "IncompleteRunError",
    "Run",
    "StoreError",
    "StoreLockedError",
    "break_lock",
    "check_new_store",
    "create_run",
    "open_run",
    "resume_run",
    "to_json",
]
