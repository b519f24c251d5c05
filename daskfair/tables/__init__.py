"""Tables as users keep them: read lazily, summarised in one pass, one-hot encoded on the
workers (:mod:`.read`, :mod:`.summary`, :mod:`.encoder`, :mod:`.partitions`)."""

from .encoder import MISSING, TableEncoder, check_encodable, summarize, text_columns
from .partitions import count_rows, partition_array, partitions
from .read import is_table_path, read_table
from .summary import ColumnSummary, TableSummary

__all__ = [
    "MISSING",
    "ColumnSummary",
    "TableEncoder",
    "TableSummary",
    "check_encodable",
    "count_rows",
    "is_table_path",
    "partition_array",
    "partitions",
    "read_table",
    "summarize",
    "text_columns",
]
