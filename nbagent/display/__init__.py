"""How nbagent shows figures, tables and charts, shared by every front-end (the agent view, the
console, the truncation explorer): ``format`` (money, tokens, hidden ranges), ``tables`` (pandas
frames, a static HTML table), ``charts`` (hand-written SVG), ``html`` (escaping, clipping).

Neutral ground: it imports the engine's contracts and facts only, never the notebook, the explorer,
the kernel or ipywidgets, so no front-end needs another to draw a number.
"""
