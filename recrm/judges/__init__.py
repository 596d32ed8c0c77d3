"""The paper's judge formats and zero-shot chat-model judges (``llm:SPEC`` scorers)."""

from recrm.judges.formats import GENERATIVE_KINDS, JUDGE_KINDS, SCHEMAS, SYSTEM_PROMPTS, Verdict

__all__ = ["JUDGE_KINDS", "GENERATIVE_KINDS", "SCHEMAS", "SYSTEM_PROMPTS", "Verdict"]
