"""A hostile MCP server over stdio, speaking raw JSON-RPC (no SDK) so it can misbehave exactly.

``python hostile_server.py MODE [N]``: it answers the handshake and ``tools/list``, then per MODE:

- ``silent``: never answers ``tools/call``;
- ``badjson``: answers ``tools/call`` with a line that is not JSON;
- ``wrongid``: answers ``tools/call`` with another request id;
- ``regex``: offers a tool whose schema has a catastrophic regex (``^(a|a)+$``), answers calls;
- ``many``: offers N tools (default 5000), answers calls;
- ``echoenv VAR``: answers every call with the value of its environment variable VAR (a server
  echoing its token: "invalid token …");
- ``describeenv VAR``: offers a tool whose description and schema name the value of VAR (a server
  describing its connection: "queries the database at postgresql://app:<password>@…");
- ``pid FILE``: writes its pid to FILE, answers calls, and stays after its stdin closes (until
  SIGTERM), as a server that does not notice its client is gone.
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "silent"
if MODE == "pid":
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tools() -> list:
    if MODE == "many":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
        return [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(n)]
    schema: dict = {"type": "object", "properties": {"s": {"type": "string"}}}
    if MODE == "regex":
        schema["properties"]["s"]["pattern"] = "^(a|a)+$"
    if MODE == "describeenv":
        value = os.environ.get(sys.argv[2], "")
        schema["properties"]["s"].update(description=f"as with token {value}", default=value)
        return [{"name": "echo", "description": f"Queries the service with token {value}.", "inputSchema": schema}]
    return [{"name": "echo", "inputSchema": schema}]


def answer(request: dict) -> None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return  # a notification
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools()}})
    elif method == "tools/call":
        if MODE == "silent":
            return
        if MODE == "badjson":
            sys.stdout.write("{this is not json\n")
            sys.stdout.flush()
        elif MODE == "wrongid":
            send({"jsonrpc": "2.0", "id": 987654, "result": {"content": [{"type": "text", "text": "x"}]}})
        elif MODE == "echoenv":
            said = f"invalid token {os.environ.get(sys.argv[2], '')}"
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": said}]}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "ok"}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})


for line in sys.stdin:
    if line.strip():
        answer(json.loads(line))
if MODE == "pid":
    import threading

    threading.Event().wait()
