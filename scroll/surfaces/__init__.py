"""Surfaces: Scroll where people already work (the MCP server, the session viewer, ...).

Each surface reaches the log only through the one typed capability (scroll.capability);
none opens a second, looser path to it. Their third-party dependencies (the `mcp` SDK,
a web stack) are imported inside these modules, never by `import scroll`.
"""
