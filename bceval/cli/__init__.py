"""The command line: argparse only; the work is done by steps and the graph."""

from bceval.cli.main import main

__all__ = ["main"]
