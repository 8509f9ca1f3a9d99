"""A "server" that reads stdin and never answers: its MCP handshake never finishes.

``python silent_server.py PIDFILE`` writes its process id to PIDFILE first (tests check that the
process is gone after the session closes).
"""

import os
import sys

if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
for _line in sys.stdin:
    pass
