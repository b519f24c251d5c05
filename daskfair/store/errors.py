"""What can be wrong with a run store, as exceptions (all :class:`StoreError`)."""

__all__ = ["CorruptStoreError", "IncompleteRunError", "StoreError", "StoreLockedError"]


class StoreError(ValueError):
    """The path is not a readable daskfair run (missing, corrupt, another format)."""


class IncompleteRunError(StoreError):
    """The run exists but did not finish: it must not be used as a result."""


class CorruptStoreError(StoreError):
    """The run was marked complete, but its files no longer match what was written."""


class StoreLockedError(StoreError):
    """Another run holds the store's lease (or a dead run left it behind)."""
