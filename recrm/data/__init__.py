"""RecRM-format data: typed records of the five databases, JSONL I/O, synthesis from trajectories."""

# The package's public names are those of its record schema and its JSONL I/O.
from recrm.data.io import *  # noqa: F403
from recrm.data.io import __all__ as _io_all
from recrm.data.schema import *  # noqa: F403
from recrm.data.schema import __all__ as _schema_all

__all__ = [*_schema_all, *_io_all]
