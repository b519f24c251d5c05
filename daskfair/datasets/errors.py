"""The errors of the data layer: a file that cannot be had, a file that is not the right one."""

__all__ = ["DataIntegrityError", "DataUnavailableError"]


class DataUnavailableError(OSError):
    """A data file is missing and could not be downloaded (what to do is in the message)."""


class DataIntegrityError(ValueError):
    """A data file does not match its SHA-256 checksum."""
