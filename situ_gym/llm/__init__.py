"""Chat backends for the LLM roles: OpenAI-compatible HTTP, local transformers (incl. GGUF), cache."""
