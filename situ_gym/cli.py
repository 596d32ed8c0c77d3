"""What every command line of the project shares: one-line errors found after parsing, and
``-v/--verbose`` with the log level it sets."""

from __future__ import annotations

import argparse
import logging
from typing import NoReturn

__all__ = ["fail", "add_verbose", "setup_logging"]


def fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Exit 2 with ``PROG: error: MESSAGE`` alone: a setup mistake found after the flags were
    read is one line (argparse's ``parser.error`` prints the usage block first, which is for
    ``--help`` and for flags it cannot parse)."""
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    """``-v/--verbose``: INFO lines, the libraries' included (warnings and errors only without it)."""
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and library messages (INFO)")


def setup_logging(verbose: bool) -> None:
    """The command's log level: INFO with ``--verbose``, else WARNING."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
