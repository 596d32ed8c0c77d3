"""eval.llm_bench --validity on a scripted model: usable-reply shares per role from the runs' usage logs."""

from __future__ import annotations

import json

from eval.llm_bench import format_validity, main, validity_rows
from tests.llm.scripted import ScriptedBackend

_DIMENSIONS = ("Informativeness", "Naturalness", "Groundedness", "Preference Alignment", "Proactiveness",
               "Non-repetition", "Overall")


def _reply(request, call):
    if request.role == "user":  # every third shopper reply is unusable (not JSON): re-asked
        if call % 3 == 0:
            return "well..."
        return json.dumps({"utterance": "Let me look.", "tool_call": {"name": "idle", "arguments": {}},
                           "revealed": None, "give_up": False})
    if request.role == "moderator":
        return json.dumps({"end": False, "reason": "still shopping"})
    return json.dumps({d: 3 for d in _DIMENSIONS})


def test_rows_count_reasks_and_fallbacks_as_unusable_replies():
    summary = {"user": {"calls": 10, "reasks": 2, "fallbacks": 1, "decisions": 8, "used": 7, "seconds": 5.0,
                        "prompt_tokens": 10000, "completion_tokens": 500, "prefix_share": 0.9}}
    (row,) = validity_rows(summary)
    assert row["valid"] == 0.7 and row["seconds_per_call"] == 0.5 and row["prompt_per_call"] == 1000
    assert "| shopper | 10 | 70.0% | 8: 7 / 1 | 2 | 0.50 | 1,000 | 50.0 | 90% |" in format_validity([row])


def test_validity_cli_on_a_scripted_model(monkeypatch, capsys, tmp_path):
    import situ_gym.llm.hf_backend as hf_backend
    from situ_gym.llm import clear_backends

    class Model(ScriptedBackend):
        def __init__(self, spec, **kwargs):
            super().__init__(_reply, model=spec)

    monkeypatch.setattr(hf_backend, "HFChatBackend", Model)
    clear_backends()
    code = main(["--validity", "--model", "hf:scripted", "--tasks", "0-1", "--max-turns", "2", "--min-calls", "4",
                 "--out", str(tmp_path / "bench")])
    out = capsys.readouterr().out
    lines = {line.split(" | ")[0].strip("| "): line for line in out.splitlines() if line.startswith("| ")}
    assert {"shopper", "moderator", "judge"} <= set(lines)
    assert "| 100.0% |" in lines["moderator"] and "| 100.0% |" in lines["judge"]
    assert "| 100.0% |" not in lines["shopper"]  # its re-asked replies count as unusable
    assert code == 1 and "below" in out and "shopper" in out.splitlines()[-1]
    clear_backends()
