"""What every command line of the project shares: one-line errors found after parsing."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["fail"]


def fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Exit 2 with ``PROG: error: MESSAGE`` alone: a setup mistake found after the flags were
    read is one line (argparse's ``parser.error`` prints the usage block first, which is for
    ``--help`` and for flags it cannot parse)."""
    parser.exit(2, f"{parser.prog}: error: {message}\n")
