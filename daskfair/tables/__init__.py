"""Tables as users keep them: read lazily, summarised in one pass, one-hot encoded."""

from .encoder import MISSING, TableEncoder, check_encodable, summarize, text_columns
from .read import is_table_path, read_table
from .summary import ColumnSummary, TableSummary

__all__ = ["MISSING", "ColumnSummary", "TableEncoder", "TableSummary",
           "check_encodable",
           "is_table_path", "read_table", "summarize", "text_columns"]
