"""``workbench app``: serve the dashboard (Corpus, Tune, Replay, Compare, Configs) in the browser."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from workbench.cli.common import CORPUS_HELP, NAMED_HELP
from workbench.cli.errors import UsageError

EXAMPLE = """\
example:
  workbench app sample --config configs/upstream_shaped.yaml --config configs/recommended.yaml

  Prints a URL with a token (http://127.0.0.1:8765/?token=...): open it in a browser. From
  another machine, tunnel the port instead of binding another address:
      ssh -N -L 8765:127.0.0.1:8765 you@this-machine   then open the printed URL there.

exit status: 0 stopped (Ctrl-C), 2 bad usage (a corpus that does not open, a non-loopback --host,
a --port another server holds).
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench app`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "app",
        help="serve the dashboard (open, import or record a corpus; tune, replay, compare, configs)",
        description="Serve the workbench as a dashboard in the browser, on 127.0.0.1 with a token: "
        "the notebook views (Tuner, Replayer, Compare) without code cells.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", nargs="?", metavar="CORPUS", help=CORPUS_HELP + "; none: open one in the page")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="CONFIG",
        type=Path,
        help=f"a config the session starts with (YAML or synth-ai TOML, or {NAMED_HELP}); repeat for several",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        type=Path,
        help="folder keeping the session's configs across restarts (default: .workbench-app "
        "inside the corpus folder; for the sample, ~/.local/share/workbench/sample-app)",
    )
    parser.add_argument("--port", type=int, default=8765, metavar="N", help="port (default 8765; 0 is refused)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1); another than loopback needs --allow-remote",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that other machines can reach (prefer an SSH tunnel)",
    )
    parser.add_argument("--no-token", action="store_true", help="serve without a token (anyone who can reach the port)")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="server log level (the log keeps every error's traceback)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments (the corpus opens, the configs read), then serve until interrupted."""
    from workbench.cli.common import read_config
    from workbench.data.opening import open_corpus
    from workbench.views.app.options import AppOptions
    from workbench.views.app.server import check_host, check_port, new_token, serve
    from workbench.views.app.workspace import default_workspace

    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: must be between 1 and 65535")
    check_host(args.host, allow_remote=args.allow_remote)
    check_port(args.host, args.port)  # a busy port is one line, before any URL
    if args.corpus is not None:
        open_corpus(args.corpus)  # fail here, with one line, rather than in the page
    for path in args.config:
        read_config(str(path))
    workspace = args.workspace or default_workspace(args.corpus or "sample")
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    options = AppOptions(corpus=args.corpus, configs=list(args.config), workspace=Path(workspace))
    print(f"workspace (kept configs): {Path(workspace).expanduser().resolve()}", flush=True)
    serve(
        options,
        host=args.host,
        port=args.port,
        token=None if args.no_token else new_token(),
        allow_remote=args.allow_remote,
        announce=lambda line: print(line, flush=True),
    )
    return 0
