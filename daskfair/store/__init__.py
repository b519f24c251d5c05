"""Run stores: one zarr group per run, one writer at a time (docs/design.md#stores)."""

from .access import check_new_store, create_run, open_run, resume_run
from .errors import CorruptStoreError, IncompleteRunError, StoreError, StoreLockedError
from .lease import break_lock
from .run import STORE_FORMAT, Run, to_json

__all__ = ["STORE_FORMAT", "CorruptStoreError", "IncompleteRunError", "Run", "StoreError",
           "StoreLockedError", "break_lock", "check_new_store", "create_run", "open_run",
           "resume_run", "to_json"]
