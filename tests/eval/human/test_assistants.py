"""Assistants by study name: every kind goes through one builder."""

import pytest

from agents.heuristic import HeuristicAssistant
from agents.registry import AGENTS
from eval.human.assistants import build_assistant, parse_assistant_list, split_assistant_name


def test_names_split_into_kind_and_model():
    assert split_assistant_name("hf:runs/sft/final") == ("hf", "runs/sft/final")
    assert split_assistant_name("heuristic") == ("heuristic", None)
    assert split_assistant_name("tests.eval.human.conftest:ChattyAssistant") == (
        "tests.eval.human.conftest:ChattyAssistant", None)
    with pytest.raises(ValueError, match="needs a model"):
        split_assistant_name("hf:")


def test_a_newly_registered_kind_plugs_in(monkeypatch):
    monkeypatch.setitem(AGENTS, "fakeapi", "tests.eval.human.conftest:ModelAssistant")
    agent = build_assistant("fakeapi:some-model")
    assert agent.model == "some-model"
    assert isinstance(build_assistant("heuristic"), HeuristicAssistant)
    assert parse_assistant_list(" heuristic, fakeapi:m ,random") == ["heuristic", "fakeapi:m", "random"]


@pytest.mark.parametrize("spec, message", [("", "no assistants"), ("random,random", "repeat"),
                                           ("hf", "needs a model"), ("gpt", "unknown agent")])
def test_bad_assistant_lists_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_assistant_list(spec)
