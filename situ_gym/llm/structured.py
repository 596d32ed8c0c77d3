"""Structured replies: check a reply against its JSON Schema, and constrain a local model's decoding to it.

A role sets ``ChatRequest.schema`` to what it may answer (legal names and handles as
enums, bounded strings). Over HTTP the schema travels as ``response_format``; the local
transformers backend builds one grammar matcher per batch row from it with llguidance,
whose token masks make every finished reply parse and validate (a reply cut by
``max_tokens`` stays unfinished, so roles give their bounded schemas room). Whatever
serves the request, the role checks the reply again with :func:`parse_reply`.

>>> schema = {"type": "object", "properties": {"end": {"type": "boolean"}}, "required": ["end"],
...           "additionalProperties": False}
>>> parse_reply('Sure: {"end": true}', schema)
({'end': True}, '')
>>> parse_reply('{"end": "yes"}', schema)[1]
"reply does not match the schema: at end: 'yes' is not of type 'boolean'"

Library: llguidance (guidance-ai; the structured-output engine of llama.cpp, vLLM and
SGLang). Measured on SmolLM2-135M on this project's CPU machine (transformers 5.24,
torch 2.13 CPU, one thread, batch of 4 rows each with its own shopper schema: anyOf over
6 tools, handle enums, const names, integer bounds, an enum holding null), against a
plain step of 100-120 ms:

==================  ===========  ============  ============  =====================================
library             setup        compile       mask / step   notes
==================  ===========  ============  ============  =====================================
llguidance 1.9.1    0.5 s        2 ms/schema   1.0-1.8 ms    16/16 rows valid; one 7.6 MB wheel
xgrammar 0.2.9      0.2 s        13 ms/schema  0.8-1.2 ms    valid when not cut by the token
                                                             limit; pulls triton (1 GB) and
                                                             apache-tvm-ffi onto a CPU machine
outlines 1.3.3      0.3 s        850 ms/schema 0.8-0.9 ms    regex DFA over the 49k vocabulary:
(outlines_core)                                              the per-turn handle enums would pay
                                                             it on every turn
lm-format-enforcer  1.4 s        -             3.8-4.3 ms    transformers 5 breaks its import;
0.11.3                                                       enum with null unsupported, integer
                                                             bounds not enforced: 0/16 valid
==================  ===========  ============  ============  =====================================

llguidance compiles the fastest (schemas change every turn with the handles in view),
rejects unsupported keywords instead of ignoring them, handles enums, const and anyOf,
and is a single dependency-free wheel.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import Any

from situ_gym.llm.replies import extract_json

__all__ = [
    "JSON_OBJECT",
    "bounded_string",
    "closed_object",
    "schema_errors",
    "parse_reply",
    "request_schema",
    "GrammarConstraint",
]

logger = logging.getLogger(__name__)

# What a json_mode request without a schema is held to locally: any JSON object.
JSON_OBJECT: dict[str, Any] = {"type": "object"}

# json.dumps' own layout: the form models have seen most, and no room for runaway whitespace.
_COMPILE_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
_PIP = 'pip install "situ-gym[llm]"'


def bounded_string(max_length: int, min_length: int = 1) -> dict[str, Any]:
    """A string schema of ``min_length`` to ``max_length`` characters."""
    if not 0 <= min_length <= max_length:
        raise ValueError(f"need 0 <= min_length <= max_length, got {min_length!r}, {max_length!r}")
    return {"type": "string", "minLength": min_length, "maxLength": max_length}


def closed_object(properties: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    """An object schema with exactly ``properties`` (all required unless ``required`` says)."""
    return {"type": "object", "properties": dict(properties),
            "required": list(properties if required is None else required), "additionalProperties": False}


def _validator(schema: dict[str, Any]):
    try:
        import jsonschema
    except ImportError as exc:
        raise ImportError(f"checking replies against a schema needs jsonschema: {_PIP}") from exc
    return jsonschema.Draft202012Validator(schema)


def schema_errors(value: Any, schema: dict[str, Any], limit: int = 3) -> list[str]:
    """Why ``value`` does not validate against ``schema`` (at most ``limit`` reasons; [] when it does)."""
    out = []
    for error in sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path)
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        out.append(f"at {where}: {message}" if where else message)
        if len(out) >= limit:
            break
    return out


def parse_reply(text: str, schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """``(object, "")`` for a reply holding a JSON object valid under ``schema`` (None: any
    object), else ``(None, reason)``."""
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    if schema is not None:
        errors = schema_errors(value, schema)
        if errors:
            return None, "reply does not match the schema: " + "; ".join(errors)
    return value, ""


def request_schema(request: Any) -> dict[str, Any] | None:
    """The schema a request's reply is held to: its ``schema``, any object for ``json_mode``, else None."""
    if request.schema is not None:
        return request.schema
    return JSON_OBJECT if request.json_mode else None


class GrammarConstraint:
    """llguidance for one tokenizer: ``logits_processor(schemas)`` constrains one ``generate``.

    ``vocab_size`` is the model's logits width (it may exceed the tokenizer's); ``eos_ids``
    the tokens that end a reply (allowed only where the grammar is complete). Building the
    llguidance tokenizer takes about a second; keep one per loaded model.
    """

    def __init__(self, tokenizer: Any, *, vocab_size: int, eos_ids: Sequence[int]):
        try:
            import llguidance
            import llguidance.hf
        except ImportError as exc:
            raise ImportError(f"constrained decoding needs llguidance: {_PIP}") from exc
        if not eos_ids:
            raise ValueError("eos_ids must name at least one token")
        self._llg = llguidance
        self.vocab_size = int(vocab_size)
        self.eos_ids = sorted({int(i) for i in eos_ids})
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer, n_vocab=self.vocab_size, eos_token=self.eos_ids)
        self._grammars: dict[str, str] = {}
        self._lock = threading.Lock()

    def grammar(self, schema: dict[str, Any]) -> str:
        """The llguidance grammar of ``schema`` (cached); ValueError when llguidance cannot compile it."""
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            cached = self._grammars.get(key)
        if cached is not None:
            return cached
        grammar = self._llg.LLMatcher.grammar_from_json_schema(schema, defaults=_COMPILE_OPTIONS)
        error = self._llg.LLMatcher.validate_grammar(grammar, self.tokenizer)
        if error:
            raise ValueError(f"cannot constrain decoding to this schema: {error.splitlines()[0]}")
        with self._lock:
            if len(self._grammars) > 512:  # handles change every turn: keep the recent ones
                self._grammars.clear()
            self._grammars[key] = grammar
        return grammar

    def logits_processor(self, schemas: Sequence[dict[str, Any] | None]) -> Any:
        """A transformers LogitsProcessor for one ``generate`` over ``len(schemas)`` rows, row i
        held to ``schemas[i]`` (None: unconstrained). Use it for one call only."""
        matchers = [None if s is None else self._llg.LLMatcher(self.tokenizer, self.grammar(s)) for s in schemas]
        return _SchemaLogitsProcessor(self._llg, matchers, self.vocab_size, self.eos_ids)


class _SchemaLogitsProcessor:
    """One llguidance matcher per row (None: unconstrained): each step it feeds the row's
    last token to its matcher and masks the logits to what the grammar allows next; a
    finished grammar allows only an end of reply. llguidance computes and applies the masks.
    (A plain callable: transformers' LogitsProcessorList calls it like its own processors.)"""

    def __init__(self, llg: Any, matchers: list[Any], vocab_size: int, eos_ids: list[int]):
        import llguidance.torch as lt

        self._lt = lt
        self.matchers = matchers
        self._executor = llg.LLExecutor()
        self._mask = lt.allocate_token_bitmask(len(matchers), vocab_size)
        self._started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if input_ids.shape[0] != len(self.matchers):
            raise RuntimeError(f"constrained generate got {input_ids.shape[0]} rows for {len(self.matchers)} matchers")
        if self._started:
            last = input_ids[:, -1].tolist()
            for row, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_stopped() and not matcher.consume_token(last[row]):
                    logger.warning("grammar matcher of row %d failed: %s", row, matcher.get_error())
        self._started = True
        self._mask.fill_(-1)  # unconstrained rows keep every token
        rows = [(m, row) for row, m in enumerate(self.matchers) if m is not None]
        if rows:
            self._lt.fill_next_token_bitmask_par(self._executor, rows, self._mask)
        if scores.device.type == "cpu" and scores.dtype == torch.float32:
            # llguidance's numpy kernel on the same memory: its torch kernel is torch.compile'd,
            # which a CPU machine would compile on first use
            from llguidance.numpy import apply_token_bitmask_inplace

            apply_token_bitmask_inplace(scores.numpy(), self._mask.numpy())
        else:
            self._lt.apply_token_bitmask_inplace(scores, self._mask.to(scores.device))
        return scores
