"""eval.llm_bench --per-role: the requests are the roles' own, and each is timed on the backend."""

from __future__ import annotations

import json

from eval.llm_bench import format_rows, main, record_role_requests, time_requests
from tests.llm.scripted import ScriptedBackend


def test_each_role_contributes_its_own_first_request():
    requests = record_role_requests("SituRec-Supermarket-v0", task=0)
    assert sorted(requests) == ["assistant", "judge", "moderator", "user"]
    assert {role: r.role for role, r in requests.items()} == {r: r for r in requests}
    user, assistant = requests["user"].messages, requests["assistant"].messages
    assert user[-1]["content"].startswith("Turn 1.") and "Your tools" in user[-1]["content"]
    assert [m["role"] for m in assistant] == ["system", "user"]  # as sent, before the reply was appended
    assert "Catalog" in assistant[0]["content"]
    assert requests["judge"].messages[-1]["content"].startswith("Assistant: ")
    # Each role keeps its own limits and sampling: the shopper samples, the others decode greedily.
    assert requests["user"].temperature > 0 and requests["judge"].temperature == requests["moderator"].temperature == 0


def test_rows_time_every_role_and_flag_a_prompt_beyond_the_context():
    requests = record_role_requests("SituRec-Supermarket-v0", task=0)
    backend = ScriptedBackend(lambda r, i: "one two three")
    rows = time_requests(backend, requests, repeats=2)
    assert [r["role"] for r in rows] == list(requests) and len(backend.batches) == 2 * len(requests)
    assert all(r["completion_tokens"] == 3 and r["tokens_per_s"] == 3 / 0.01 for r in rows)
    rows[0]["prompt_tokens"] = 9000
    table = format_rows(rows, context=8192)
    assert table.count("beyond the 8192-token context") == 1 and table.count("\n") == len(rows) + 1


def test_per_role_cli_on_a_scripted_model(monkeypatch, capsys):
    import situ_gym.llm.hf_backend as hf_backend
    from situ_gym.llm import clear_backends

    class Model(ScriptedBackend):
        def __init__(self, spec, **kwargs):
            super().__init__(lambda r, i: json.dumps({"role": r.role}), model=spec)

    monkeypatch.setattr(hf_backend, "HFChatBackend", Model)
    clear_backends()
    assert main(["--per-role", "--model", "hf:scripted", "--roles", "user,judge"]) == 0
    out = capsys.readouterr().out
    assert "| shopper | 10 |" in out and "| judge | 10 |" in out and "moderator" not in out
    clear_backends()
