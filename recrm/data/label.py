"""Label RecRM records with a model teacher (the paper's judge prompts through a chat backend).

    python -m recrm.data label --teacher hf:gguf:smollm2 data/recrm --out data/recrm-teacher

Every record keeps its own (rule, synthesised) label and gets the teacher's beside it
(``record.teacher``, a :class:`recrm.data.schema.TeacherLabel`); an answer the teacher could
not give in format is kept as ``label: None`` with its ``error``, never filled in.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from recrm.data.schema import TeacherLabel
from recrm.judges.formats import record_requests

__all__ = ["label_records"]

logger = logging.getLogger(__name__)


def label_records(kind: str, records: Sequence[Any], judge: Any, *, batch: int = 32) -> tuple[list[Any], Counter]:
    """``records`` with ``teacher`` set by ``judge`` (an ``LLMScorer``), and the count of
    labelled / failed records. The judge is asked ``batch`` inputs at a time."""
    fields, spans = record_requests(kind, records)
    verdicts = []
    for i in range(0, len(fields), batch):
        verdicts += judge.judge(kind, fields[i : i + batch])
        logger.info("%s: %d / %d teacher answers", kind, len(verdicts), len(fields))
    counts: Counter = Counter()
    out = []
    for rec, (start, n) in zip(records, spans, strict=True):
        vs = verdicts[start : start + n]
        errors = [v.error for v in vs if v.label is None]
        if kind == "ranking":
            scores = [v.extra.get("prob") if v.extra.get("prob") is not None else
                      (None if v.label is None else float(v.label)) for v in vs]
            teacher = TeacherLabel(model=judge.spec, labels=[v.label for v in vs], scores=scores,
                                   error=errors[0] if errors else None)
        else:
            v = vs[0]
            extra = {k: val for k, val in v.extra.items() if k != "prob"}
            scores = [v.extra["prob"]] if v.extra.get("prob") is not None else None
            teacher = TeacherLabel(model=judge.spec, label=v.label, scores=scores, details=extra, error=v.error)
        counts["failed" if errors else "labelled"] += 1
        out.append(rec.model_copy(update={"teacher": teacher}))
    return out, counts
