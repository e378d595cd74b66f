"""BM25 search over the event log (see index.py for the design)."""
from .documents import Filters, IndexDoc
from .index import SearchIndex
from .tokens import Tokenizer

__all__ = ["Filters", "IndexDoc", "SearchIndex", "Tokenizer"]
