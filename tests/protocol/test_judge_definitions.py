"""The LLM judge's definitions: abridged by default, App. C.1's text word for word under the paper's protocol."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eval.judge import make_judge
from eval.llm_judge import JUDGE_PROMPT, PAPER_DEFINITIONS, PAPER_JUDGE_PROMPT
from eval.rule_judge import DIMENSIONS
from tests.eval.builders import episode, turn
from tests.llm.scripted import ScriptedBackend

PAPER = Path(__file__).resolve().parents[3] / "shared" / "papers" / "SituRecBench.md"
NAMES = {d: ("Overall Satisfaction" if d == "Overall" else d) for d in DIMENSIONS}
REPLY = '{"Informativeness": 4, "Naturalness": 4, "Groundedness": 4, "Preference Alignment": 4, ' \
        '"Proactiveness": 4, "Non-repetition": 4, "Overall": 4}'


def _paper_definitions() -> dict[str, str]:
    """Each dimension's paragraph of C.1 "Subjective Ratings", as the paper prints it."""
    if not PAPER.exists():
        pytest.skip(f"the paper's text is not at {PAPER}")
    text = PAPER.read_text(encoding="utf-8")
    section = text[text.index("##### Subjective Ratings."):text.index("##### Human-Evaluation Agreement.")]
    out = {}
    for d, name in NAMES.items():
        found = re.search(rf"^{re.escape(name)}\. .+$", section, flags=re.M)
        assert found, f"no paragraph for {name} in C.1"
        out[d] = found.group(0).strip()
    return out


def _system_prompt(protocol: str) -> str:
    backend = ScriptedBackend(lambda _r, _i: REPLY)
    judge = make_judge("llm", protocol=protocol, model=backend)
    rated = judge.rate(episode([turn(1, response="Hello! What are you looking for?")]))
    assert rated["judge"] == "llm:scripted" and rated["Overall"] == 4.0
    (request,) = backend.batches[0]
    return request.messages[0]["content"]


def test_paper_prompt_holds_every_definition_of_c1_word_for_word():
    prompt = _system_prompt("paper")
    assert prompt == PAPER_JUDGE_PROMPT
    assert "or treating information unavailable to the user as something the user already knows" in prompt
    paper = _paper_definitions()  # the paper's own text, where the checkout has it
    assert PAPER_DEFINITIONS == paper
    for d in DIMENSIONS:
        assert paper[d] in prompt, d


def test_default_prompt_keeps_the_abridged_definitions():
    prompt = _system_prompt("default")
    assert prompt == JUDGE_PROMPT
    assert "treating information unavailable" not in prompt  # the abridged Groundedness
    paper = _paper_definitions()
    assert not any(paper[d] in prompt for d in DIMENSIONS)
    for d in DIMENSIONS:  # still every dimension, and the same reply keys
        assert f"- {d}:" in prompt and f'"{d}": n' in prompt


def test_paper_and_default_ask_for_the_same_reply_keys():
    for d in DIMENSIONS:
        assert f'"{d}": n' in PAPER_JUDGE_PROMPT


def test_an_unknown_protocol_is_refused_by_either_judge():
    with pytest.raises(ValueError, match="protocol must be one of"):
        make_judge("rule", protocol="Paper")
    with pytest.raises(ValueError, match="protocol must be one of"):
        make_judge("llm", protocol="paper2", model=ScriptedBackend(lambda _r, _i: REPLY))
