"""The study over HTTP: tokens, isolation, input limits, saved runs, restart and resume."""

import json

import pytest
from fastapi.testclient import TestClient

from eval.human.app import MAX_BODY, create_app
from eval.human.study import QUESTIONS, Study, StudyConfig
from eval.io import read_episodes
from eval.judge import DIMENSIONS

PROFILE = {"age_group": "25-34", "shopping_frequency": "weekly", "note": ""}
IDLE = {"name": "idle", "arguments": {}}
LEFT = {"name": "turn", "arguments": {"direction": "left", "angle": 30}}


def _client(out, assistants=("heuristic",), per=1):
    study = Study(StudyConfig(assistants=tuple(assistants), out=str(out), tasks_per_participant=per, max_turns=6))
    return TestClient(create_app(study)), study


def _join(client):
    r = client.post("/api/participants", json=PROFILE)
    assert r.status_code == 200, r.text
    token = r.json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _finish(client, auth, turns=((" Hi, I want yogurt.", LEFT),)):
    for utterance, call in turns:
        r = client.post("/api/turn", headers=auth, json={"utterance": utterance, "action": call})
        assert r.status_code == 200, r.text
    r = client.post("/api/turn", headers=auth, json={"utterance": "No thanks, bye.", "action": IDLE, "gave_up": True})
    assert r.status_code == 200 and r.json()["stage"] == "rating"
    return r.json()


def test_questionnaire_asks_the_judges_seven_dimensions():
    assert tuple(QUESTIONS) == DIMENSIONS


def test_joining_stops_when_the_study_is_full(tmp_path):
    study = Study(StudyConfig(assistants=("heuristic",), out=str(tmp_path / "s"), max_participants=1))
    client = TestClient(create_app(study))
    _join(client)
    r = client.post("/api/participants", json=PROFILE)
    assert r.status_code == 400 and r.json()["error"] == "the study is full; thank you for your interest"
    assert len(list((tmp_path / "s" / "participants").glob("P*.json"))) == 1


def test_tokens_isolate_participants(tmp_path):
    client, _ = _client(tmp_path / "s")
    a, b = _join(client), _join(client)
    assert client.get("/api/state").status_code == 401
    assert client.get("/api/state", headers={"Authorization": "Bearer nope"}).status_code == 401
    client.post("/api/start", headers=a)
    client.post("/api/turn", headers=a, json={"utterance": "Secret words of A", "action": LEFT})
    sa, sb = client.get("/api/state", headers=a).json(), client.get("/api/state", headers=b).json()
    assert sa["participant_id"] != sb["participant_id"] and sb["stage"] == "briefing"
    assert "Secret words of A" not in json.dumps(sb)
    saved = (tmp_path / "s" / "participants" / f"{sa['participant_id']}.json").read_text()
    assert a["Authorization"].split()[1] not in saved  # only the token's hash is stored


def test_bad_input_gets_one_line_and_changes_nothing(tmp_path):
    client, _ = _client(tmp_path / "s")
    auth = _join(client)
    assert client.post("/api/participants", json={**PROFILE, "age_group": "7"}).status_code == 400
    client.post("/api/start", headers=auth)
    before = client.get("/api/state", headers=auth).json()
    cases = [
        ({"utterance": "hi", "action": {"name": "add_to_cart", "arguments": {"item": "999"}}},
         "[999] is not in your view or in your hands now"),
        ({"utterance": "hi", "action": {"name": "add_to_cart", "arguments": {}}}, "please choose which product"),
        ({"utterance": "hi", "action": {"name": "teleport"}}, "please choose one of the actions offered"),
        ({"utterance": "", "action": IDLE, "silent": True}, "please type what you say to the assistant, or choose an action"),
        ({"utterance": " ", "action": LEFT}, "please type what you say to the assistant, or choose an action"),
        ({"utterance": "x" * 501, "action": IDLE}, "utterance: at most 500 characters"),
        ({"utterance": "hi", "action": IDLE, "extra": 1}, "extra"),
        ({"utterance": "hi", "action": {"name": "turn", "arguments": {"direction": "left", "angle": True}}},
         "action.arguments.angle: must be a word or a number"),
        ({"action": IDLE}, "utterance: Field required"),
    ]
    for body, message in cases:
        r = client.post("/api/turn", headers=auth, json=body)
        assert r.status_code == 400 and message in r.json()["error"] and "\n" not in r.json()["error"]
    r = client.post("/api/turn", headers={**auth, "Content-Type": "application/json"},
                    content=b'{"utterance": "' + b"y" * MAX_BODY + b'"}')
    assert r.status_code == 413
    chunks = iter([b'{"utterance": "hi", ', b'"action": {"name": "idle"}}'])
    r = client.post("/api/turn", headers={**auth, "Content-Type": "application/json"}, content=chunks)
    assert r.status_code == 411
    r = client.post("/api/turn", headers={**auth, "Content-Type": "application/json"}, content=b"{bad")
    assert r.json() == {"error": "the request is not valid JSON"}
    assert client.post("/api/ratings", headers=auth, json={"ratings": {}}).json()["error"]
    assert client.get("/api/state", headers=auth).json() == before


def test_finished_conversations_become_runs_that_eval_reads(tmp_path):
    from eval.aggregate import load_indexes, summarize_groups
    from eval.metrics.__main__ import main as metrics_main

    client, study = _client(tmp_path / "s", assistants=("heuristic", "random"))
    auth = _join(client)
    labels = []
    for _ in range(2):
        labels.append(client.post("/api/start", headers=auth).json()["assistant_label"])
        _finish(client, auth)
        incomplete = {d: 3 for d in DIMENSIONS[:-1]}
        assert "Overall" in client.post("/api/ratings", headers=auth, json={"ratings": incomplete}).json()["error"]
        state = client.post("/api/ratings", headers=auth, json={"ratings": {d: 5 for d in DIMENSIONS}}).json()
    assert labels == ["Assistant A", "Assistant B"] and state["stage"] == "done"
    for name in ("heuristic", "random"):
        run = tmp_path / "s" / "runs" / name
        (ep,) = read_episodes(run / "trajectories.jsonl")
        assert ep.agent == name and ep.user == "human" and ep.task_id in study.task_ids and ep.seed == 42
        assert ep.turns[0].user_utterance == "Hi, I want yogurt." and ep.termination == "moderator_end"
        config = json.loads((run / "config.json").read_text())["config"]
        assert config["agent"] == name and config["user"] == "human"
        (rating,) = [json.loads(line) for line in (run / "ratings.jsonl").read_text().splitlines()]
        assert rating == {"episode_id": ep.episode_id, "ratings": {d: 5 for d in DIMENSIONS}}
        groups = summarize_groups([ep], indexes=load_indexes({ep.store}))
        assert groups  # scored with the main-table metrics
        assert metrics_main([str(run)]) == 0


def test_restart_resumes_mid_conversation_and_matches_an_uninterrupted_run(tmp_path):
    turns = [("Hi, I want yogurt.", LEFT), ("Where is it?", {"name": "move_forward", "arguments": {"distance": "short"}})]
    client, study = _client(tmp_path / "a")
    auth = _join(client)
    client.post("/api/start", headers=auth)
    client.post("/api/turn", headers=auth, json={"utterance": turns[0][0], "action": turns[0][1]})
    before = client.get("/api/state", headers=auth).json()
    study.close()
    client, study = _client(tmp_path / "a")  # a new server process: nothing in memory
    assert client.get("/api/state", headers=auth).json() == before
    _finish(client, auth, turns[1:])

    other, _ = _client(tmp_path / "b")
    auth_b = _join(other)
    other.post("/api/start", headers=auth_b)
    _finish(other, auth_b, turns)
    a = read_episodes(tmp_path / "a" / "runs" / "heuristic" / "trajectories.jsonl")
    b = read_episodes(tmp_path / "b" / "runs" / "heuristic" / "trajectories.jsonl")
    assert [t.model_dump() for t in a[0].turns] == [t.model_dump() for t in b[0].turns]


def test_a_study_directory_belongs_to_one_setup(tmp_path):
    _client(tmp_path / "s", assistants=("heuristic",))
    with pytest.raises(ValueError, match="another setup"):
        _client(tmp_path / "s", assistants=("random",))


def test_participants_play_at_once_and_idle_ones_are_rebuilt(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    study = Study(StudyConfig(assistants=("heuristic",), out=str(tmp_path / "s"), tasks_per_participant=1,
                              max_turns=6, max_live=1))  # one live env: every switch replays
    client = TestClient(create_app(study))
    auths = [_join(client) for _ in range(3)]

    def play(i):
        auth = auths[i]
        client.post("/api/start", headers=auth)
        for k in range(2):
            r = client.post("/api/turn", headers=auth, json={"utterance": f"participant {i} turn {k}", "action": LEFT})
            assert r.status_code == 200, r.text
        return _finish(client, auth, ())

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(play, range(3)))
    episodes = read_episodes(tmp_path / "s" / "runs" / "heuristic" / "trajectories.jsonl")
    assert len(episodes) == 3
    for ep in episodes:
        i = int(ep.episode_id[1:4]) - 1
        assert [t.user_utterance for t in ep.turns][:2] == [f"participant {i} turn 0", f"participant {i} turn 1"]


@pytest.mark.parametrize(
    "argv, message",
    [(["--assistants", "nobody"], "unknown agent"), (["--assistants", "hf"], "needs a model"),
     (["--assistants", "heuristic", "--tasks-per-participant", "9"], "tasks_per_participant")],
)
def test_serve_refuses_a_bad_setup_with_one_line(tmp_path, capsys, argv, message):
    from eval.human.__main__ import main

    assert main(["serve", "--out", str(tmp_path / "s"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


BROKEN = "tests.eval.human.conftest:BrokenAssistant"


def _play_plan(client, study, auth, pid):
    """Play every planned conversation (one turn each, then give up); returns the stages seen."""
    seen = []
    for planned in study._states[pid]["plan"]:
        state = client.post("/api/start", headers=auth).json()
        if state["stage"] == "chat":
            r = client.post("/api/turn", headers=auth, json={"utterance": "Hi, I want yogurt.", "action": LEFT})
            assert r.status_code == 200, r.text
            state = r.json()
        if state["stage"] == "chat":
            state = _finish(client, auth, ())
        seen.append((planned["assistant"], state))
        if state["stage"] == "rating":
            state = client.post("/api/ratings", headers=auth, json={"ratings": {d: 4 for d in DIMENSIONS}}).json()
    return seen


def test_an_assistant_that_fails_ends_that_conversation_and_the_participant_goes_on(tmp_path, caplog):
    client, study = _client(tmp_path / "s", assistants=(BROKEN, "heuristic"))
    auth = _join(client)
    pid = client.get("/api/state", headers=auth).json()["participant_id"]
    with caplog.at_level("INFO", logger="eval.human"):
        seen = dict(_play_plan(client, study, auth, pid))
    broken = seen[BROKEN]  # the state right after the failing turn
    assert broken["stage"] in ("briefing", "done")
    assert broken["notice"].startswith("We are sorry: Assistant ") and "stopped working" in broken["notice"]
    assert "Traceback" not in json.dumps(broken) and "ConnectionError" not in json.dumps(broken)
    assert seen["heuristic"]["stage"] == "rating"  # the other conversation went on as planned
    state = client.get("/api/state", headers=auth).json()
    assert state["stage"] == "done"
    study.close()
    client, _ = _client(tmp_path / "s", assistants=(BROKEN, "heuristic"))  # the resume code still works
    assert client.get("/api/state", headers=auth).json()["stage"] == "done"
    (ep,) = read_episodes(tmp_path / "s" / "runs" / "tests.eval.human.conftest_BrokenAssistant" / "trajectories.jsonl")
    assert ep.termination == "error" and ep.error_cause == "crash" and "ConnectionError: endpoint went away" in ep.error
    assert [t.user_utterance for t in ep.turns] == ["Hi, I want yogurt."]
    assert not (tmp_path / "s" / "runs" / "tests.eval.human.conftest_BrokenAssistant" / "ratings.jsonl").exists()
    done = json.loads((tmp_path / "s" / "participants" / f"{pid}.json").read_text())["done"]
    assert sorted((d["assistant"], d["termination"]) for d in done) == [("heuristic", "moderator_end"),
                                                                        (BROKEN, "error")]
    assert any("ended: error after 1 turns (crash: ConnectionError: endpoint went away)" in r.message
               for r in caplog.records)


def test_an_assistant_that_cannot_start_ends_the_conversation_at_once(tmp_path):
    client, _ = _client(tmp_path / "s", assistants=("tests.eval.human.conftest:DeadOnArrivalAssistant",))
    auth = _join(client)
    state = client.post("/api/start", headers=auth).json()
    assert state["stage"] == "done" and "You have no more conversations to do." in state["notice"]
    (ep,) = read_episodes(tmp_path / "s" / "runs" / "tests.eval.human.conftest_DeadOnArrivalAssistant"
                          / "trajectories.jsonl")
    assert ep.termination == "error" and ep.turns == [] and "model weights are corrupt" in ep.error


def test_a_failure_replayed_after_a_restart_ends_the_same_way(tmp_path):
    client, study = _client(tmp_path / "s", assistants=(BROKEN,))
    auth = _join(client)
    client.post("/api/start", headers=auth)
    path = tmp_path / "s" / "participants" / "P001.json"
    client.post("/api/turn", headers=auth, json={"utterance": "Hi.", "action": LEFT})
    state = json.loads(path.read_text())
    assert state["stage"] == "done" and state["done"][0]["log"][-1]["error"].startswith("ConnectionError")
    # a server that died before moving on: the log alone ends the conversation the same way
    state.update(stage="chat", index=0, log=state["done"][0]["log"], done=[])
    path.write_text(json.dumps(state))
    study.close()
    client, _ = _client(tmp_path / "s", assistants=(BROKEN,))
    assert "stopped working" in client.get("/api/state", headers=auth).json()["notice"]
    assert len(read_episodes(tmp_path / "s" / "runs" / "tests.eval.human.conftest_BrokenAssistant"
                             / "trajectories.jsonl")) == 1


@pytest.mark.parametrize("spec, message", [
    ("heuristic,tests.eval.human.conftest:UnbuildableAssistant",
     "assistant 'tests.eval.human.conftest:UnbuildableAssistant' cannot play: OSError: no such model: /missing"),
    ("heuristic,hf:/missing", "assistant 'hf:/missing' cannot play: ValueError: model path does not exist"),
    ("tests.eval.human.conftest:DeadOnArrivalAssistant",
     "cannot play: RuntimeError: model weights are corrupt"),
])
def test_serve_checks_every_assistant_before_anyone_joins(tmp_path, capsys, spec, message):
    from eval.human.__main__ import main

    assert main(["serve", "--out", str(tmp_path / "s"), "--assistants", spec]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "s").exists()  # nothing written: the same --out works once fixed


def test_the_rating_page_shows_the_transcript_and_the_outcome(tmp_path):
    client, _ = _client(tmp_path / "s")
    auth = _join(client)
    client.post("/api/start", headers=auth)
    state = _finish(client, auth)
    assert state["outcome"] == {"bought": "You did not buy anything.", "reason": "You ended the conversation yourself."}
    speakers = [line["speaker"] for line in state["transcript"]]
    assert speakers[:3] == ["assistant", "you", "action"]
    assert {"speaker": "you", "text": "No thanks, bye."} in state["transcript"]
    assert client.get("/api/state", headers=auth).json()["transcript"] == state["transcript"]  # kept on reload


def test_buying_says_what_was_bought(tmp_path):
    client, study = _client(tmp_path / "s")
    auth = _join(client)
    state = client.post("/api/start", headers=auth).json()
    second = state["handles"]["item"][1]  # not the first one: the participant chooses
    r = client.post("/api/turn", headers=auth, json={"utterance": "I'll take it.",
                                                    "action": {"name": "add_to_cart", "arguments": {"item": second["handle"]}}})
    state = r.json()
    assert state["stage"] == "rating"
    assert state["outcome"] == {"bought": f"You bought {second['name']}.",
                                "reason": "You put a product in your cart, which ends the conversation."}
    (ep,) = read_episodes(tmp_path / "s" / "runs" / "heuristic" / "trajectories.jsonl")
    assert len(ep.cart) == 1 and ep.cart == [ep.turns[-1].user_action.target_id]


def test_a_silent_move_needs_no_words(tmp_path):
    client, study = _client(tmp_path / "s")
    auth = _join(client)
    client.post("/api/start", headers=auth)
    r = client.post("/api/turn", headers=auth, json={"utterance": "", "action": LEFT})
    assert r.status_code == 400 and "type what you say" in r.json()["error"]  # silence must be meant
    r = client.post("/api/turn", headers=auth, json={"utterance": "", "action": IDLE, "silent": True})
    assert r.status_code == 400 and "or choose an action" in r.json()["error"]  # saying and doing nothing
    r = client.post("/api/turn", headers=auth, json={"utterance": "", "action": LEFT, "silent": True})
    assert r.status_code == 200, r.text
    dialogue = r.json()["dialogue"]
    assert not any(line["speaker"] == "you" for line in dialogue)
    assert any(line["speaker"] == "action" and line["text"].startswith("turn:") for line in dialogue)
    study.close()
    client, _ = _client(tmp_path / "s")  # the silent turn replays after a restart
    assert client.get("/api/state", headers=auth).json() == r.json()


def test_the_researcher_page_needs_its_token_and_counts_progress(tmp_path, caplog):
    study = Study(StudyConfig(assistants=("heuristic", BROKEN), out=str(tmp_path / "s"), tasks_per_participant=1,
                              max_turns=6))
    client = TestClient(create_app(study, admin_token="secret-admin"))
    assert client.get("/admin").status_code == 401
    assert client.get("/admin?token=wrong").status_code == 401
    assert client.get("/api/admin", headers={"Authorization": "Bearer wrong"}).status_code == 401
    page = client.get("/admin?token=secret-admin")
    assert page.status_code == 200 and "Per assistant" in page.text
    a, b = _join(client), _join(client)
    assert client.get("/api/admin", headers=a).status_code == 401  # a participant's token is not the researcher's
    with caplog.at_level("INFO", logger="eval.human"):
        _play_plan(client, study, a, "P001")
        client.post("/api/start", headers=b)
    data = client.get("/api/admin", headers={"Authorization": "Bearer secret-admin"}).json()
    people = {p["participant_id"]: p for p in data["participants"]}
    assert (people["P001"]["planned"], people["P001"]["done"], people["P001"]["errored"],
            people["P001"]["rated"], people["P001"]["stage"]) == (2, 1, 1, 1, "done")
    assert people["P002"]["stage"] in ("chat", "briefing", "done")
    per = {x["assistant"]: x for x in data["assistants"]}
    assert per["heuristic"]["planned"] == 2 and per[BROKEN]["planned"] == 2
    assert per["heuristic"]["rated"] == 1 and per[BROKEN]["errored"] >= 1 and per[BROKEN]["rated"] == 0
    assert "Hi, I want yogurt." not in json.dumps(data)  # progress only, nothing anyone typed
    lines = [r.message for r in caplog.records if r.levelname == "INFO"]
    assert any(m.startswith("P001 conversation 1/2 started: task ") for m in lines)
    assert any(m.startswith("P001 conversation 1/2 turn 1: turn (done)") or
               m.startswith("P001 conversation 2/2 turn 1: turn (done)") for m in lines)
    assert any("ended: moderator_end after 2 turns" in m for m in lines)
    assert sum("questionnaire saved" in m for m in lines) == 1


def test_without_a_researcher_token_there_is_no_researcher_page(tmp_path):
    client, _ = _client(tmp_path / "s")
    assert client.get("/admin?token=x").status_code == 404
    assert client.get("/api/admin").status_code == 404


def test_report_puts_the_questionnaire_beside_the_judge(tmp_path):
    from eval.human.__main__ import main

    client, _ = _client(tmp_path / "s", assistants=("heuristic", "random"))
    auth = _join(client)
    for score in (2, 4):
        client.post("/api/start", headers=auth)
        _finish(client, auth)
        client.post("/api/ratings", headers=auth, json={"ratings": {d: score for d in DIMENSIONS}})
    assert main(["report", "--out", str(tmp_path / "s")]) == 0
    table = (tmp_path / "s" / "questionnaire.md").read_text()
    rows = [line.split(" | ") for line in table.splitlines() if "participants" in line]
    means = sorted(float(r[3]) for r in rows)
    assert means == [2.0, 4.0] and all(r[2] == "1" for r in rows)
    assert table.count("| judge (rule-based) |") == 2
    for name in ("heuristic", "random"):
        assert (tmp_path / "s" / "runs" / name / "report.md").exists()
        assert (tmp_path / "s" / "runs" / name / "index.html").exists()
    assert main(["report", "--out", str(tmp_path / "empty")]) == 2


def test_model_backed_kinds_record_agent_and_model_like_rollout(tmp_path, monkeypatch):
    from agents.registry import AGENTS

    monkeypatch.setitem(AGENTS, "fakeapi", "tests.eval.human.conftest:ModelAssistant")
    study = Study(StudyConfig(assistants=("fakeapi:m1",), out=str(tmp_path / "s"), tasks_per_participant=1,
                              assistant_options={"fakeapi:m1": {"base_url": "http://127.0.0.1:9/v1"}}))
    client = TestClient(create_app(study))
    auth = _join(client)
    first = client.post("/api/start", headers=auth).json()["dialogue"][0]["text"]
    assert "hello via http://127.0.0.1:9/v1" in first
    _finish(client, auth)
    run = tmp_path / "s" / "runs" / "fakeapi_m1"
    config = json.loads((run / "config.json").read_text())
    assert (config["assistant"], config["config"]["agent"], config["config"]["model"]) == ("fakeapi:m1", "fakeapi", "m1")
    assert read_episodes(run / "trajectories.jsonl")[0].agent == "fakeapi"
    with pytest.raises(ValueError, match="not in the study"):
        StudyConfig(assistants=("heuristic",), out=str(tmp_path / "t"), assistant_options={"random": {}})


def test_a_crash_between_saving_the_episode_and_the_stage_repeats_nothing(tmp_path):
    client, study = _client(tmp_path / "s")
    auth = _join(client)
    client.post("/api/start", headers=auth)
    _finish(client, auth)
    study.close()
    path = tmp_path / "s" / "participants" / "P001.json"
    state = json.loads(path.read_text())
    state["stage"] = "chat"  # as if the server died right after appending the episode
    del state["episode_id"], state["termination"]
    path.write_text(json.dumps(state))
    client, _ = _client(tmp_path / "s")
    assert client.get("/api/state", headers=auth).json()["stage"] == "rating"
    client.post("/api/ratings", headers=auth, json={"ratings": {d: 4 for d in DIMENSIONS}})
    run = tmp_path / "s" / "runs" / "heuristic"
    assert len(read_episodes(run / "trajectories.jsonl")) == 1
    assert len((run / "ratings.jsonl").read_text().splitlines()) == 1
