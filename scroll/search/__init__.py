"""BM25 search over the event log (see index.py for the design)."""
from .index import Filters, IndexDoc, SearchIndex
from .tokens import Tokenizer

__all__ = ["Filters", "IndexDoc", "SearchIndex", "Tokenizer"]
