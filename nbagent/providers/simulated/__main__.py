"""``python -m nbagent.providers.simulated --port N``: the simulated Messages API on 127.0.0.1.

Any Anthropic client can use it (``base_url=http://127.0.0.1:N``, any API key). It binds the
loopback interface only: it is a development stand-in, not a service.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from .app import SimulatedAPI
from .faults import FaultSchedule
from .rate_limits import RateLimitSettings
from .server import LOOPBACK, close_server, start_server


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m nbagent.providers.simulated",
                                description="Serve nbagent's offline simulated Messages API on 127.0.0.1.")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0 picks a free one; default 8765)")
    p.add_argument("--window", type=int, default=None, help="context window in tokens (default: per model)")
    p.add_argument("--faults", type=FaultSchedule.parse, default=None,
                   help='fault schedule, e.g. "2=rate_limit,5=drop" or "p=0.1,seed=3,kinds=overloaded+drop"')
    p.add_argument("--tokens-per-second", type=float, default=None, help="pace the stream (default: no pacing)")
    p.add_argument("--first-token-latency", type=float, default=0.0, help="seconds before the first token")
    p.add_argument("--rpm", type=int, default=None, help="shared rate limit: requests per minute (429 over it)")
    p.add_argument("--input-tpm", type=int, default=None, help="shared rate limit: uncached input tokens per minute")
    p.add_argument("--output-tpm", type=int, default=None, help="shared rate limit: output tokens per minute")
    p.add_argument("--time-factor", type=float, default=1.0,
                   help="compress the rate limit's minute (10: a minute lasts 6 s; default 1)")
    return p


def rate_limit_settings(args: argparse.Namespace) -> RateLimitSettings | None:
    """The shared rate limit mode the options ask for (None when no limit is given)."""
    if args.rpm is None and args.input_tpm is None and args.output_tpm is None:
        return None
    return RateLimitSettings(args.rpm, args.input_tpm, args.output_tpm, args.time_factor)


async def _serve(args: argparse.Namespace) -> None:
    api = SimulatedAPI(context_window=args.window, faults=args.faults,
                       tokens_per_second=args.tokens_per_second, first_token_latency=args.first_token_latency,
                       rate_limits=rate_limit_settings(args))
    connections: set[asyncio.StreamWriter] = set()
    server = await start_server(api, args.port, connections)
    port = server.sockets[0].getsockname()[1]
    # Tests and scripts read this line to learn the port when --port 0 was given.
    print(f"nbagent simulated Messages API (not a real model) listening on http://{LOOPBACK}:{port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await close_server(server, connections)


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted."""
    args = _parser().parse_args(argv)
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
