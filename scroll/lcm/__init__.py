"""LCM (Lossless Context Management) parts: the summary DAG, its escalation and its tools.

* `history`   - the granted history (history-origin events of granted sessions) and its text form
* `summarize` - the three-level escalation (normal -> aggressive -> deterministic truncation)
* `store`     - `DagStore`: nodes in `<log>.lcm.db`, a separate, append-only SQLite file
* `dag`       - `SummaryDag`: soft/hard thresholds, leaf and condensed passes, resumable builds
* `tools`     - grep / describe / expand / expand_query, as plain functions returning text

The event log is never written: summaries are a derived view with pointers (seqs, child
ids) back to the exact events.
"""
from __future__ import annotations

from .config import LcmConfig
from .dag import BuildReport, SummaryDag
from .store import render_node
from .store import DagStore, LcmError, Node
from .summarize import LEVELS, Summarizer, Summary, Usage
from .tools import describe, expand, expand_query, grep

__all__ = ["BuildReport", "DagStore", "LEVELS", "LcmConfig", "LcmError", "Node", "Summarizer", "Summary",
           "SummaryDag", "Usage", "describe", "expand", "expand_query", "grep", "render_node"]
