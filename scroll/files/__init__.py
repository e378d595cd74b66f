"""Large files behind a reference: `ms.attach(path)` and `scroll import --attach`.

Modules: attach (FileAttacher: the capability's attach methods; store_file / log_file:
one payload + one `file` event), dispatch (the type-aware exploration summary and its
bound), summary (FileType, the shared readers, the plain-text summarizers), structured
(CSV/TSV, JSON, JSONL), code (Python via ast, other languages via regex).
"""
from __future__ import annotations

from .attach import (KIND, AttachedFile, FileAttacher, FileLimits, check_host_file, file_refs, import_file, log_file,
                     read_chunks, store_file)
from .dispatch import summarize
from .summary import FileSummary, FileType, SummaryLimits, detect_type

__all__ = ["KIND", "AttachedFile", "FileAttacher", "FileLimits", "FileSummary", "FileType", "SummaryLimits",
           "check_host_file", "detect_type", "file_refs", "import_file", "log_file", "read_chunks", "store_file", "summarize"]
