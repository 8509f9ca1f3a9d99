"""``%agent serve``: the notebook's own tools offered to other agents over MCP, behind its permission gate.

One idea per module: :mod:`.http` (uvicorn on a thread, bearer token), :mod:`.kernel_loop` (work
handed to the kernel's main loop), :mod:`.app` (the MCP tools), :mod:`.operations` (what they do,
reusing nbagent's notebook and python tools), :mod:`.gate` and :mod:`.card` (Allow / Deny in the
notebook), :mod:`.clients` (who is connected), :mod:`.record` (the external actions' record),
:mod:`.server` (the parts together), :mod:`.command` (the ``%agent serve`` command).
See docs/mcp.md.
"""
