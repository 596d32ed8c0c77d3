"""RecRM-format data: typed records of the five databases, JSONL I/O, synthesis from trajectories."""

from recrm.data.io import DataError, data_file, load_split, read_records, to_dataset, write_records
from recrm.data.schema import (
    KINDS,
    RECORD_TYPES,
    BehaviorRecord,
    ConsistencyRecord,
    InstructionRecord,
    RankingRecord,
    RelevanceRecord,
    Source,
)

__all__ = [
    "KINDS",
    "RECORD_TYPES",
    "Source",
    "InstructionRecord",
    "ConsistencyRecord",
    "RelevanceRecord",
    "RankingRecord",
    "BehaviorRecord",
    "DataError",
    "data_file",
    "read_records",
    "write_records",
    "load_split",
    "to_dataset",
]
