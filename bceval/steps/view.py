"""`bceval view` and `doit view`: build the static viewer of an output folder (bceval.viewer) and say where its
index is; `--serve` serves the site on 127.0.0.1 only, until Ctrl-C."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path
from typing import Any

from bceval.config import load_settings
from bceval.errors import BcevalError
from bceval.layout import OutDir
from bceval.viewer.site import build_site


def build_view(out: Path, site: Path | None = None) -> Path:
    """Write out/view/ (or `site`) from the runs, experiments and guidance runs in `out`; the progress line goes to
    stderr."""
    if not out.is_dir():
        raise BcevalError(f"{out}: output directory does not exist; run bceval score, an experiment or a guidance run")
    view = OutDir(out).view if site is None else site
    try:
        built = build_site(out, view)
    except OSError as exc:  # a downloaded CI artifact, a read-only mount
        raise BcevalError(
            f"{view}: cannot write the site ({exc.strerror}); write it elsewhere with --site DIR"
        ) from None
    print(
        f"bceval: view: {built.pages} page(s), {built.written} rewritten, {built.removed} removed",
        file=sys.stderr,
    )
    return view / "index.html"


def report_view(args: Any) -> int:
    """`bceval view`: build the site, print its index path (and with --serve, serve it on 127.0.0.1 until
    interrupted)."""
    index = build_view(load_settings(out=args.out, corpus=args.corpus).out, args.site and Path(args.site).resolve())
    print(index)
    if args.serve:
        with site_server(index.parent, args.port) as server:
            print(f"Serving http://127.0.0.1:{server.server_address[1]}/index.html (Ctrl-C stops)", flush=True)
            server.serve_forever()
    return 0


def site_server(folder: Path, port: int) -> Any:
    """A static file server of `folder` on the loopback interface only: the site holds model output and corpus
    text, which is nobody else's business on the network."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass  # one line per request would drown the terminal

    handler = functools.partial(Quiet, directory=str(folder))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise BcevalError(f"--port {port}: cannot listen on 127.0.0.1 ({exc.strerror})") from None
