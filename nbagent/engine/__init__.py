"""The pure-asyncio core of nbagent.

Nothing in this package imports IPython, ipywidgets or pandas: every front-end (widgets, plain
text, a test) is a consumer of the events the engine yields.
"""
