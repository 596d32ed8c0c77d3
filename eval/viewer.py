"""Self-contained HTML trajectory viewer: ``index.html`` (run summary, plots, the episodes in
task order, sortable and filterable) plus one page per episode: why it ended (one sentence, the
recommendation attempts marked), the goal and budget in words, the purchase against the
reference set, the reward per turn and in total, the shopper's path on the store map (labels
placed so that none overlaps another), both roles' SoM frames with a legend of their marks (when
the run saved frames), the dialogue, expected vs taken actions and the ranking by name. All text
is escaped (:func:`_esc`: markup characters and quotes as entities, lone surrogates as U+FFFD, so
a page is always valid UTF-8); the index's one script is a constant that reads ``data-*``
attributes and writes ``textContent`` only; every file name derived from an episode id is one
plain path segment (:func:`safe_name`)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from eval.plots import FIGURES
from recrm.composite import COMPONENT_NAMES
from recrm.dimensions import DIMENSIONS
from situ_gym import jsonl
from situ_gym.actions.tools import TRANSLATIONAL_TOOLS
from situ_gym.env import RECOMMENDATION_LIMIT, STALL_DISPLACEMENT, STALL_LIMIT
from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.wording import label_value

__all__ = [
    "safe_name", "frame_name", "marks_name", "map_name", "episode_page", "write_episode_map", "write_viewer",
    "plan_episode_map", "MapLabel", "EpisodeMap", "end_sentence", "purchase_kind", "episode_reward",
    "attempt_turns", "reward_label", "REWARD_LABELS", "PURCHASE_CLASSES", "MAP_WIDTH",
]

MAP_WIDTH = 900  # pixels; the episode map is drawn and shown at this width

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
.turn{border:1px solid #bbb;border-radius:6px;padding:8px;margin:10px 0}
.turn.attempt{border:2px solid #c77d00;background:#fffaf0}tr.attempt td{background:#fff1d6}
.badge{display:inline-block;font-size:80%;font-weight:600;padding:1px 7px;border-radius:9px;background:#c77d00;color:#fff}
.frames img{width:240px;margin-right:8px;border:1px solid #999}
.frames figure{display:inline-block;margin:0 8px 0 0;vertical-align:top}
.frames figcaption{font-size:85%;color:#444;max-width:240px}
.legend{font-size:88%;margin:4px 0}.plots img{width:49%;max-width:640px}
.summary td:last-child,.summary th:last-child{text-align:left}
.note{background:#fff6d8;border:1px solid #e0c060;padding:6px 10px;border-radius:4px}
.summary td,.summary th{text-align:right}.summary td:first-child,.summary th:first-child{text-align:left}
.outcome{border-radius:6px;padding:6px 12px;margin:8px 0;border:2px solid}.outcome p{margin:4px 0}
.outcome .end{font-size:115%;font-weight:600}
.buy-reference{color:#05620f}.outcome.buy-reference{background:#e6f5e6;border-color:#3c9a45}
.buy-reference .badge{background:#2e8b3a}
.buy-other{color:#8a4b00}.outcome.buy-other{background:#fff1d6;border-color:#d08a1a}.buy-other .badge{background:#b86e00}
.buy-none{color:#a00}.outcome.buy-none{background:#fbe6e6;border-color:#c44}.buy-none .badge{background:#b22}
.outcome{color:#222}.goal p{margin:4px 0}
table.rw{font-size:88%}table.rw th{font-weight:500;background:#f4f4f4}table.glance{font-size:92%}
figure.map{margin:8px 0}figure.map img{max-width:100%;height:auto;border:1px solid #999}
.filters label{margin-right:14px}.filters input{width:4.5em}
table.sortable td{white-space:nowrap}table.sortable th{cursor:pointer;user-select:none;background:#f4f4f4}table.sortable th:hover{background:#e8eef8}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
.ok{color:#060}.bad{color:#a00}.muted{color:#666;font-size:90%}pre{white-space:pre-wrap;margin:0}"""
_NO_FRAMES = ("Frames were not saved in this run: rerun with <code>--save-frames</code> to see what both "
              "roles saw at every turn.")
_NO_REWARD = ("No reward components were recorded: rerun with <code>--reward recrm</code> to see RecRM's "
              "per-turn reward here.")


_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_NAME = 150  # characters of a file name made from an episode id (file systems allow 255 bytes)


def _esc(text: Any) -> str:
    """``text`` for HTML (``&``, ``<``, ``>`` and both quotes as entities) with every lone
    surrogate, which UTF-8 cannot encode, as U+FFFD."""
    return escape(_SURROGATE.sub("\ufffd", str(text)))


def safe_name(episode_id: str) -> str:
    """A filesystem-safe name for an episode id (used for pages and frame folders): one
    plain path segment of ``[A-Za-z0-9_.-]``, never empty, ``.``/``..`` or hidden (a ``_``
    goes in front), and at most 150 characters (a longer id keeps its head plus a hash).

    >>> safe_name("sm_u01_t1#r0"), safe_name(".."), safe_name("")
    ('sm_u01_t1_r0', '_..', '_')
    """
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", episode_id)
    if not name or name.startswith("."):
        name = "_" + name
    if len(name) > _MAX_NAME:
        digest = hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = name[: _MAX_NAME - 17] + "-" + digest
    return name


def frame_name(episode_id: str, turn: int, role: str) -> str:
    """Relative path (from the run dir) of the frame a role saw when turn ``turn`` began
    (``turn = T + 1`` is the view after the last action)."""
    return f"frames/{safe_name(episode_id)}/t{turn:02d}_{role}.png"


def marks_name(frame: str) -> str:
    """The legend file saved beside a frame: its marks as ``[[handle, entity id], ...]``."""
    return frame.rsplit(".", 1)[0] + ".json"


def map_name(episode_id: str) -> str:
    """Relative path (from the run dir) of an episode's map with the shopper's path."""
    return f"maps/{safe_name(episode_id)}.png"


def _name(eid: str | None, index: SceneIndex | None) -> str:
    if eid is None:
        return "-"
    if index is not None and eid in index.entities:
        return f"{index.name(eid)} ({eid})"
    return eid


def _call(call: ToolCall | None, index: SceneIndex | None) -> str:
    if call is None:
        return "<i>none</i>"
    args = _esc(json.dumps(call.arguments, ensure_ascii=False))
    target = f" → {_esc(_name(call.target_id, index))}" if call.target_id else ""
    flags = "" if call.legal and call.valid else f" <span class=bad>[{'illegal' if not call.legal else 'invalid'}]</span>"
    err = f" <span class=muted>{_esc(call.error)}</span>" if call.error else ""
    return f"<b>{_esc(call.name)}</b> {args}{target}{flags}{err}"


def _figure(rel: str, caption: str) -> str:
    """A frame thumbnail that opens full size."""
    src = _esc("../" + rel)
    return (f'<figure><a href="{src}" target="_blank"><img src="{src}" alt="{_esc(caption)}"></a>'
            f"<figcaption>{_esc(caption)}</figcaption></figure>")


def _frames_html(ep: EpisodeRecord, turn: int, index: SceneIndex | None, frames: set[str],
                 marks: dict[str, list[list[str]]], when: str) -> str:
    """The frames a turn began with (thumbnails, click for full size) and, under them, the
    legend of each view's marks: handle -> product or place name."""
    figs, legends = [], []
    for role in ("assistant", "user", "map"):
        rel = frame_name(ep.episode_id, turn, role)
        if rel not in frames:
            continue
        what = "assistant's map" if role == "map" else f"{role}'s view"
        figs.append(_figure(rel, f"{what} {when}"))
        if marks.get(rel):
            names = "; ".join(f"<b>{_esc(h)}</b> {_esc(_name(e, index))}" for h, e in marks[rel])
            legends.append(f"<p class=legend><b>Marks in the {role}'s view:</b> {names}</p>")
    if not figs:
        return ""
    return f'<div class=frames>{"".join(figs)}</div>{"".join(legends)}'


# ------------------------------------------------------------------ what the episode came to
PURCHASE_CLASSES = {"reference": "buy-reference", "other": "buy-other", "none": "buy-none"}
_PURCHASE_WORDS = {"reference": "reference item", "other": "not in the reference set", "none": "nothing bought"}
# RecRM's dimensions (recrm.dimensions) as a reader names them
_DIMENSION_WORDS = {d.name: d.label for d in DIMENSIONS}
REWARD_LABELS = {f"recrm/{n}": _DIMENSION_WORDS.get(n, n) for n in COMPONENT_NAMES} | {
    "recrm/total": "turn reward (R_total)", "recrm/reward": "reward paid (R_total + outcome bonus)"}
TOTAL_KEY = "recrm/total"
_ORDINALS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def reward_label(key: str) -> str:
    """A turn's reward key as a reader names it; an unknown key as it is.

    >>> reward_label("recrm/instruction"), reward_label("custom/x")
    ('instruction gate (C_inst)', 'custom/x')
    """
    return REWARD_LABELS.get(key, key)


def episode_reward(ep: EpisodeRecord) -> float | None:
    """The episode's total reward: the sum of its turns' ``recrm/total`` (None when no turn has one)."""
    values = [t.reward.get(TOTAL_KEY) for t in ep.turns]
    values = [v for v in values if v is not None]
    return float(sum(values)) if values else None


def purchase_kind(ep: EpisodeRecord) -> str:
    """``"reference"`` (an item of the reference set was bought), ``"other"`` (something
    else was) or ``"none"``."""
    if not ep.cart:
        return "none"
    return "reference" if any(e in ep.reference_set for e in ep.cart) else "other"


def attempt_turns(ep: EpisodeRecord) -> list[TurnRecord]:
    """The turns that spent recommendation attempts toward the env's limit."""
    return [t for t in sorted(ep.turns, key=lambda t: t.turn) if t.recommendation_attempts > 0]


def _ordinal(n: int) -> str:
    return _ORDINALS[n] if 0 <= n < len(_ORDINALS) else f"{n}th"


def _turns_phrase(turns: list[int]) -> str:
    """``[3]`` -> ``"turn 3"``, ``[3, 5, 9]`` -> ``"turns 3, 5, 9"``."""
    return ("turn " if len(turns) == 1 else "turns ") + ", ".join(str(t) for t in turns)


def _stalled_turns(turns: list[TurnRecord]) -> list[int]:
    """The last translational actions that moved under the stall distance, as the env counts
    them (other actions neither count nor reset the count)."""
    out: list[int] = []
    for t in reversed(turns):
        call, result = t.user_action, t.result
        if call is None or not call.valid or result is None or not (result.translational or call.name in TRANSLATIONAL_TOOLS):
            continue
        if result.displacement >= STALL_DISPLACEMENT or len(out) == STALL_LIMIT:
            break
        out.append(t.turn)
    return out[::-1]


def end_sentence(ep: EpisodeRecord, index: SceneIndex | None = None) -> str:
    """Why the episode ended, in one plain-text sentence, e.g. ``"Ended on turn 9: the
    third recommendation attempt went unbought (turns 3, 5, 9)."``"""
    turns = sorted(ep.turns, key=lambda t: t.turn)
    where = f"Ended on turn {turns[-1].turn}" if turns else "Ended before the first turn"
    spent = attempt_turns(ep)
    n = sum(t.recommendation_attempts for t in spent)
    marked = _turns_phrase([t.turn for t in spent])
    tried = f"{n} recommendation attempt{'' if n == 1 else 's'} ({marked})" if n else "no recommendation attempt"
    term = ep.termination
    if term == "success_cart_added":
        item = ep.cart[-1] if ep.cart else None
        kind = purchase_kind(ep)
        what = {"reference": "a reference item" + (", the target" if item == ep.target_id else ""),
                "other": "not in the reference set", "none": "yet the cart is empty"}[kind]
        return f"{where}: the shopper put {_name(item, index)} in the cart ({what}) after {tried}."
    if term == "recommendation_exhausted":
        return f"{where}: the {_ordinal(n)} recommendation attempt went unbought ({marked})."
    if term == "turn_limit":
        return f"{where}: the {len(turns)}-turn limit was reached with nothing bought, after {tried}."
    if term == "moderator_end":
        last = " ".join((turns[-1].user_utterance if turns else "").split())
        said = f"; the shopper's last words: \u201c{last[:200]}{'…' if len(last) > 200 else ''}\u201d" if last else "."
        return f"{where}: the moderator ended the conversation with nothing bought, after {tried}{said}"
    if term == "motion_stall":
        stalled = _stalled_turns(turns)
        moves = f" ({_turns_phrase(stalled)})" if stalled else ""
        return (f"{where}: the shopper's last {len(stalled) or STALL_LIMIT} moves went nowhere{moves}, each under "
                f"{100 * STALL_DISPLACEMENT:.0f} cm, after {tried}.")
    if term == "error":
        cause = f" ({ep.error_cause})" if ep.error_cause else ""
        return f"{where}: the episode crashed{cause} after {tried}; the traceback is below."
    return f"{where}: {term}."


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _labels(tags: list[str]) -> list[str]:
    """``["flavour:vanilla"]`` -> ``["vanilla (flavour)"]``."""
    return [f"{label_value(t)} ({t.partition(':')[0]})" if ":" in t else t for t in tags]


def _goal_html(ep: EpisodeRecord, task: Any, index: SceneIndex | None) -> str:
    """The task in words: what is wanted and avoided, the budget, target and reference set by name."""
    bought = set(ep.cart)

    def item(eid: str) -> str:
        notes = [w for w, on in (("target", eid == ep.target_id), ("bought", eid in bought)) if on]
        return _esc(_name(eid, index)) + (f" <i>({', '.join(notes)})</i>" if notes else "")

    if task is not None:
        needs, avoids = _labels(task.required_tags), _labels(task.avoided_tags)
        wants = f"Wants <b>{_esc(task.category)}</b>"
        wants += (": " + _esc(", ".join(needs))) if needs else ""
        wants += ("; not " + _esc(" or ".join(avoids))) if avoids else ""
        use = next((d.value for d in task.disclosure if d.kind == "use" and d.value), None)
        wants += f"; at most <b>{_money(ep.budget)}</b> ({_esc(task.budget_tier)} budget)"
        wants += f"; for {_esc(use)}." if use else "."
        words = f"<p class=muted>In the shopper's words: \u201c{_esc(task.request)}\u201d</p>"
    else:
        wants = (f"Budget: at most <b>{_money(ep.budget)}</b>. <span class=muted>(The task's needs are not shown: "
                 "its record is not in the packaged task banks.)</span>")
        words = ""
    refs = "; ".join(item(e) for e in ep.reference_set) or "<i>empty</i>"
    return (f"<div class=goal><p>{wants}</p>{words}<p><b>Target:</b> {item(ep.target_id)}<br>"
            f"<b>Reference set</b> ({len(ep.reference_set)} items meeting the needs and the budget): {refs}</p></div>")


def _outcome_html(ep: EpisodeRecord, index: SceneIndex | None) -> str:
    kind = purchase_kind(ep)
    bought = ", ".join(_name(e, index) for e in ep.cart) or "nothing"
    total = episode_reward(ep)
    reward = ("no reward recorded" if total is None else
              f"episode reward <b>{total:.3f}</b> <span class=muted>(sum of R_total over {len(ep.turns)} turns)</span>")
    return (f'<div class="outcome {PURCHASE_CLASSES[kind]}" data-purchase="{kind}"><p class=end>'
            f"{_esc(end_sentence(ep, index))}</p><p><b>Purchase:</b> {_esc(bought)} "
            f"<span class=badge>{_PURCHASE_WORDS[kind]}</span> · {reward}</p></div>")


def _places_html(index: SceneIndex) -> str:
    """The map's legend: every handle on it with the full name of its place."""
    from situ_gym.som.labels import fixed_handles_by_id

    handle_of = fixed_handles_by_id(index, "assistant")
    scene = index.scene
    places = [*scene.stores, *scene.areas, *scene.fixtures]
    items = "; ".join(f"<b>{_esc(handle_of.get(p.id, '?'))}</b> {_esc(p.name)}" for p in places)
    return f"<p class=legend><b>Places on the map:</b> {items}</p>"


def _reward_table(reward: dict[str, float | None]) -> str:
    heads = "".join(f'<th title="{_esc(k)}">{_esc(reward_label(k))}</th>' for k in reward)
    cells = "".join(f"<td>{'-' if v is None else f'{v:.3f}'}</td>" for v in reward.values())
    return f"<table class=rw><tr>{heads}</tr><tr>{cells}</tr></table>"


def _glance_html(ep: EpisodeRecord, index: SceneIndex | None) -> str:
    """One line per turn: what the assistant did, what it put forward (attempts marked), what the shopper did."""
    rows, spent = [], 0
    here = _esc(safe_name(ep.episode_id)) + ".html"  # this page (a link of the fuzz tests' plain form)
    for t in sorted(ep.turns, key=lambda t: t.turn):
        spent += t.recommendation_attempts
        put = ", ".join(_name(e, index) for e in t.put_forward)
        attempt = (f"<b>attempt {spent} of {RECOMMENDATION_LIMIT}</b> " if t.recommendation_attempts else "")
        act = t.user_action
        reward = t.reward.get(TOTAL_KEY)
        rows.append(f'<tr class="{"attempt" if t.recommendation_attempts else "plain"}"><td><a href="{here}#t{t.turn}">'
                    f"{t.turn}</a></td><td>{_esc(str(t.action_type))}</td><td>{attempt}{_esc(put)}</td>"
                    f"<td>{_esc(act.name if act else '-')}</td>"
                    f"<td>{'-' if reward is None else f'{reward:.3f}'}</td></tr>")
    return ("<table class=glance><tr><th>turn</th><th>assistant action</th><th>put forward "
            "(recommendation attempts marked)</th><th>shopper's action</th><th>R_total</th></tr>"
            + "".join(rows) + "</table>")


def _turn_html(ep: EpisodeRecord, t: TurnRecord, index: SceneIndex | None, frames: set[str],
               marks: dict[str, list[list[str]]] | None = None, attempt: int = 0) -> str:
    """One turn's card; ``attempt`` is the count of recommendation attempts spent up to and
    including this turn (marked when the turn spent one)."""
    when = f"as turn {t.turn} began (before the shopper acts)"
    imgs = _frames_html(ep, t.turn, index, frames, marks or {}, when)
    exp, act = t.expected_user_action, t.user_action
    follow = ""
    if exp is not None:
        same = act is not None and act.name == exp.name
        follow = f" <span class={'ok' if same else 'bad'}>{'followed' if same else 'not followed'}</span>"
    ranking = ", ".join(_esc(_name(pid, index)) for pid in t.ranking) or "<i>empty</i>"
    errors = "".join(f"<li class=bad>{_esc(e)}</li>" for e in t.assistant_errors)
    result = t.result
    rows = [
        ("Assistant", f"<pre>{_esc(t.response)}</pre>"),
        ("Action", f"<b>{_esc(str(t.action_type))}</b> <span class=muted>"
                   f"{_esc(json.dumps(t.action, ensure_ascii=False)) if t.action else ''}</span>"
                   + (f"<br>goal: {_esc(_name(t.navigation_goal_id, index))}" if t.navigation_goal_id else "")
                   + (f"<br>recommends: {_esc(_name(t.recommended_id, index))}" if t.recommended_id else "")),
    ]
    if t.recommendation_attempts:
        put = ", ".join(_name(e, index) for e in t.put_forward) or "-"
        rows.append(("Recommendation attempt", f"<b>{attempt} of {RECOMMENDATION_LIMIT}</b>: puts forward "
                                               f"{_esc(put)}"))
    rows += [
        ("Expected user action", _call(exp, index) + follow),
        ("User", f"<pre>{_esc(t.user_utterance)}</pre>"),
        ("User action", _call(act, index)),
        ("Result", "-" if result is None else
         f"<span class={'ok' if result.ok else 'bad'}>{_esc(result.message)}</span> "
         f"<span class=muted>moved {result.displacement:.2f} m</span>"),
        ("Ranking", ranking),
        ("Visible after", _esc(", ".join(_name(e, index) for e in t.visible_after)) or "-"),
        ("Cart / held", _esc(", ".join(_name(e, index) for e in t.cart) or "empty")
         + " / " + _esc(_name(t.held_item, index))),
        ("Pose after", f"x {t.pose_after[0]:.2f} m, y {t.pose_after[1]:.2f} m, yaw {t.pose_after[2]:.0f}° "
                       f"<span class=muted>(point {t.turn} on the map)</span>"),
    ]
    if t.reward:
        rows.append(("Reward", _reward_table(t.reward)))
    if errors:
        rows.append(("Output errors", f"<ul>{errors}</ul>"))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    marked = (f' <span class=badge>recommendation attempt {attempt} of {RECOMMENDATION_LIMIT}</span>'
              if t.recommendation_attempts else "")
    cls = "turn attempt" if t.recommendation_attempts else "turn"
    return f'<div class="{cls}" id="t{t.turn}"><h3>Turn {t.turn}{marked}</h3>{imgs}<table>{body}</table></div>'


def episode_page(
    ep: EpisodeRecord,
    index: SceneIndex | None = None,
    rating: dict[str, Any] | None = None,
    neighbours: tuple[str | None, str | None] = (None, None),
    marks: dict[str, list[list[str]]] | None = None,
    map_rel: str | None = None,
    task: Any = None,
) -> str:
    """One episode as a standalone HTML page (frames referenced relative to ``episodes/``):
    why it ended, the goal in words (``task``: its ``situ_gym.scene.model.Task``, when
    known), the purchase and the episode reward, the map, then every turn (recommendation
    attempts marked). ``neighbours`` are the previous / next episode ids for the page's
    links, ``marks`` the legends of saved frames (frame path -> [[handle, entity id], ...])
    and ``map_rel`` the episode's map with the shopper's path."""
    frames = set(ep.frames)
    links = ['<a href="../index.html">all episodes</a>']
    for label, other in zip(("previous", "next"), neighbours, strict=True):
        if other is not None:
            links.append(f'<a href="{_esc(safe_name(other))}.html">{label}: {_esc(other)}</a>')
    parts = [
        "<!doctype html><html><head><meta charset=utf-8>",
        f"<title>{_esc(ep.episode_id)}</title><style>{_CSS}</style></head><body>",
        "<p>" + " · ".join(links) + "</p>",
        f"<h1>{_esc(ep.episode_id)}</h1>",
        _outcome_html(ep, index),
        "<h2>Goal</h2>",
        _goal_html(ep, task, index),
    ]
    notes = []
    if not frames:
        notes.append(_NO_FRAMES)
    if ep.turns and not any(t.reward for t in ep.turns):
        notes.append(_NO_REWARD)
    if map_rel:
        parts.append(f'<figure class=map><a href="../{_esc(map_rel)}" target="_blank"><img src="../{_esc(map_rel)}" '
                     f'width={MAP_WIDTH} alt="store map"></a><figcaption class=muted>Store map (assistant\'s '
                     "handles): the shopper's start (S) and where it stood after each turn; one label per spot, "
                     "with every turn spent there (\u201c4-6\u201d: turns 4 to 6 did not move). Lines join "
                     "consecutive poses, not the walked route; the arrow is the last heading.</figcaption></figure>")
        if index is not None:
            parts.append(_places_html(index))
    parts.append("<h2>Turns at a glance</h2>" + _glance_html(ep, index))
    parts.append("<h2>Record</h2><table>")
    meta = [("env", ep.env_id), ("task / profile / subset", f"{ep.task_id} / {ep.profile_id} / {ep.subset}"),
            ("agent / user / seed", f"{ep.agent} / {ep.user} / {ep.seed}"),
            ("target", _name(ep.target_id, index)), ("budget", f"{ep.budget:.2f}"),
            ("reference set", ", ".join(_name(e, index) for e in ep.reference_set)),
            ("cart", ", ".join(_name(e, index) for e in ep.cart) or "empty"),
            ("termination", ep.termination)]
    parts += [f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in meta]
    if rating:
        judge = rating.get("judge", "unknown")
        scores = ", ".join(f"{k}: {v}" for k, v in rating.items() if k != "judge")
        parts.append(f"<tr><th>dialogue ratings ({_esc(str(judge))} judge, 1-5)</th><td>{_esc(scores)}</td></tr>")
    parts.append("</table>")
    parts += [f"<p class=note>{n}</p>" for n in notes]
    if ep.error:
        parts.append(f"<h2 class=bad>Error</h2><pre>{_esc(ep.error)}</pre>")
    spent = 0
    for t in sorted(ep.turns, key=lambda t: t.turn):
        spent += t.recommendation_attempts
        parts.append(_turn_html(ep, t, index, frames, marks, spent))
    final = _frames_html(ep, len(ep.turns) + 1, index, frames, marks or {}, "after the last action")
    if final:
        parts.append(f"<div class=turn><h3>Final view</h3>{final}</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


# ------------------------------------------------------------------ the episode map
# Drawn here rather than with situ_gym.som.minimap: the minimap is the assistant's small
# observation; the viewer's map is a figure for a reader, larger, with every label placed
# where it overlaps no other (MapLabel boxes, checked by the tests).
_RGB = {"outside": (48, 48, 52), "floor": (236, 234, 226), "wall": (70, 70, 76), "fixture": (176, 196, 226),
        "fixture_edge": (60, 90, 150), "store": (232, 214, 178), "store_edge": (150, 110, 50),
        "area_edge": (190, 150, 90), "path": (200, 40, 40), "text": (20, 20, 20), "pose_text": (120, 20, 20),
        "leader": (150, 60, 60), "tag_text": (255, 255, 255)}  # RGB, the minimap's palette
_SAME_SPOT_PX = 4  # poses closer than this on the map are one spot with one label
_DOT = 4


@dataclass(frozen=True)
class MapLabel:
    """One text placed on the episode map: ``box`` is (x0, y0, x1, y1) in pixels, x1/y1
    exclusive; ``anchor`` the point or footprint centre it names."""

    kind: str  # "store", "fixture", "area" or "pose"
    text: str
    box: tuple[int, int, int, int]
    anchor: tuple[int, int]
    rotated: bool = False
    leader: bool = False  # drawn with a line to its anchor (placed away from it)
    tag: bool = False  # a filled name tag (stores)
    font: str = ""  # a key of _fonts(); "" is the kind's own


@dataclass(frozen=True)
class EpisodeMap:
    """What :func:`write_episode_map` draws: plan-to-pixel transform, the shopper's poses
    in pixels (start first), the spots they group into (pose indices, 0 = start) and every label."""

    width: int
    height: int
    points: list[tuple[int, int]]
    spots: list[list[int]]
    labels: list[MapLabel]
    heading: float


def _fonts() -> dict[str, Any]:
    import matplotlib
    from PIL import ImageFont

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    regular, bold = str(ttf / "DejaVuSans.ttf"), str(ttf / "DejaVuSans-Bold.ttf")
    return {"store": ImageFont.truetype(bold, 14), "fixture": ImageFont.truetype(regular, 13),
            "fixture_small": ImageFont.truetype(regular, 10), "area": ImageFont.truetype(regular, 12),
            "pose": ImageFont.truetype(bold, 12)}


_FONT_CACHE: dict[str, Any] = {}


def _font(kind: str) -> Any:
    if not _FONT_CACHE:
        _FONT_CACHE.update(_fonts())
    return _FONT_CACHE[kind]


_PAD = 2


def _text_size(text: str, font_key: str) -> tuple[int, int]:
    font = _font(font_key)
    ascent, descent = font.getmetrics()
    lines = text.split("\n")
    width = max(int(font.getlength(line)) + 1 for line in lines)
    return width + 2 * _PAD, len(lines) * (ascent + descent) + 2 * _PAD - 2


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _overlap_area(a, b) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0) * max(h, 0)


class _Placer:
    """Greedy label placement: a label takes its first candidate box that is inside the image
    and overlaps no label placed before it, the least cluttering one (footprints, path dots)
    among those that are free."""

    def __init__(self, width: int, height: int, soft: list[tuple[int, int, int, int]]):
        self.width, self.height = width, height
        self.soft = soft  # footprints and pose dots: covered only when nothing else is free
        self.placed: list[MapLabel] = []

    def free(self, box: tuple[int, int, int, int]) -> bool:
        return (box[0] >= 0 and box[1] >= 0 and box[2] <= self.width and box[3] <= self.height
                and not any(_overlaps(box, p.box) for p in self.placed))

    def clutter(self, box, own: tuple[int, int, int, int] | None) -> int:
        return sum(_overlap_area(box, s) for s in self.soft if s != own)

    def place(self, candidates: list[MapLabel], own: tuple[int, int, int, int] | None = None,
              tolerance: int = 0) -> MapLabel | None:
        """The first free candidate whose clutter is within ``tolerance`` pixels, else the
        least cluttered free one; None when every candidate collides."""
        best: tuple[int, int, MapLabel] | None = None
        for rank, label in enumerate(candidates):
            if not self.free(label.box):
                continue
            cost = self.clutter(label.box, own)
            if cost <= tolerance:
                best = (cost, rank, label)
                break
            if best is None or cost < best[0]:
                best = (cost, rank, label)
        if best is None:
            return None
        self.placed.append(best[2])
        return best[2]


def _box_at(cx: float, cy: float, size: tuple[int, int]) -> tuple[int, int, int, int]:
    x0, y0 = int(round(cx - size[0] / 2)), int(round(cy - size[1] / 2))
    return x0, y0, x0 + size[0], y0 + size[1]


def _around(anchor: tuple[int, int], size: tuple[int, int], rect: tuple[int, int, int, int],
            gaps: tuple[int, ...] = (3,)) -> list[tuple[tuple[int, int, int, int], bool]]:
    """Boxes of ``size`` just outside ``rect`` (above, below, right, left, then the corners),
    ``gap`` pixels away; each with whether it needs a leader line to ``anchor``."""
    w, h = size
    x0, y0, x1, y1 = rect
    cx, cy = anchor
    out = []
    for gap in gaps:
        lead = gap > 8
        sides = [(cx, y0 - gap - h / 2), (cx, y1 + gap + h / 2), (x1 + gap + w / 2, cy), (x0 - gap - w / 2, cy),
                 (x1 + gap + w / 2, y0 - gap - h / 2), (x0 - gap - w / 2, y0 - gap - h / 2),
                 (x1 + gap + w / 2, y1 + gap + h / 2), (x0 - gap - w / 2, y1 + gap + h / 2)]
        out += [(_box_at(x, y, size), lead) for x, y in sides]
    return out


def _fixture_texts(handle: str, name: str) -> list[str]:
    """Longest first: "7 breakfast cereal", "7 cereal", "7" for "Shelf 1: breakfast cereal, oatmeal"."""
    title, _, rest = name.partition(":")
    what = rest.split(",")[0].strip() or title.strip()
    texts = [f"{handle} {what}", f"{handle} {what.split()[-1]}"] if what else []
    return list(dict.fromkeys([*texts, handle]))


def _area_texts(handle: str, name: str, width: int) -> list[str]:
    """ "1a" over the area's own name (the part after " - "), wrapped to ``width`` pixels;
    then the handle alone."""
    import textwrap

    _, dash, what = name.partition(" - ")
    what = (what if dash else name).strip()
    out = []
    for chars in (24, 16, 12, 9):
        lines = textwrap.wrap(what, chars)
        if lines and len(lines) <= 3:
            text = "\n".join([handle, *lines])
            if _text_size(text, "area")[0] <= width - 4:
                out.append(text)
                break
    return [*out, handle]


def _inside(text: str, kind: str, rect, rotated_ok: bool, centre: tuple[float, float] | None = None,
            font: str = "") -> list[MapLabel]:
    x0, y0, x1, y1 = rect
    w, h = _text_size(text, font or kind)
    cx, cy = centre or ((x0 + x1) / 2, (y0 + y1) / 2)
    anchor = (int((x0 + x1) / 2), int((y0 + y1) / 2))

    def within(bw: int, bh: int) -> tuple[int, int, int, int]:  # centred at (cx, cy), kept inside rect
        ux = min(max(cx, x0 + 1 + bw / 2), x1 - 1 - bw / 2)
        uy = min(max(cy, y0 + 1 + bh / 2), y1 - 1 - bh / 2)
        return _box_at(ux, uy, (bw, bh))

    out = []
    if w + 2 <= x1 - x0 and h + 2 <= y1 - y0:
        out.append(MapLabel(kind, text, within(w, h), anchor, font=font))
    if rotated_ok and h + 2 <= x1 - x0 and w + 2 <= y1 - y0:
        out.append(MapLabel(kind, text, within(h, w), anchor, rotated=True, font=font))
    return out


def _place_layout_labels(placer: _Placer, scene, tf, handle_of: dict[str, str]) -> None:
    for store in scene.stores:
        (x0, y0), (x1, y1) = tf.rect(store.footprint)
        text = f"{handle_of.get(store.id, '?')} {store.name}"
        w, h = _text_size(text, "store")
        anchor = ((x0 + x1) // 2, (y0 + y1) // 2)
        cands = [MapLabel("store", text, (x0 + 2, y0 + 2, x0 + 2 + w, y0 + 2 + h), anchor, tag=True),
                 MapLabel("store", text, (x1 - 2 - w, y0 + 2, x1 - 2, y0 + 2 + h), anchor, tag=True),
                 MapLabel("store", text, (x0 + 2, y1 - 2 - h, x0 + 2 + w, y1 - 2), anchor, tag=True)]
        short = handle_of.get(store.id, "?")
        ws, hs = _text_size(short, "store")
        cands.append(MapLabel("store", short, (x0 + 2, y0 + 2, x0 + 2 + ws, y0 + 2 + hs), anchor, tag=True))
        placer.place(cands, own=(x0, y0, x1, y1), tolerance=10 ** 9)
    for fixture in scene.fixtures:
        (x0, y0), (x1, y1) = tf.rect(fixture.footprint)
        rect = (x0, y0, x1 + 1, y1 + 1)
        texts = _fixture_texts(handle_of.get(fixture.id, "?"), fixture.name)
        tall = (y1 - y0) > (x1 - x0)
        # Inside the footprint only (the full names are in the page's legend): the longest
        # text that fits, in the regular size, then the small one; the handle alone next to
        # the footprint when not even it fits.
        cands = [c for font in ("fixture", "fixture_small") for t in texts
                 for c in _inside(t, "fixture", rect, tall, font=font)]
        anchor = ((x0 + x1) // 2, (y0 + y1) // 2)
        cands += [MapLabel("fixture", texts[-1], box, anchor, leader=lead)
                  for box, lead in _around(anchor, _text_size(texts[-1], "fixture"), rect, (2, 12))]
        _place_or_spiral(placer, cands, rect, texts[-1], "fixture", anchor)
    for area in scene.areas:
        (x0, y0), (x1, y1) = tf.rect(area.footprint)
        rect = (x0, y0, x1 + 1, y1 + 1)
        texts = _area_texts(handle_of.get(area.id, "?"), area.name, x1 - x0)
        cands = []
        for t in texts:
            w, h = _text_size(t, "area")
            for fy in (0.5, 0.3, 0.7, 0.15, 0.85):  # the centre first, then up and down the area
                cands += _inside(t, "area", rect, False, ((x0 + x1) / 2, y0 + fy * (y1 - y0)))
        anchor = ((x0 + x1) // 2, (y0 + y1) // 2)
        _place_or_spiral(placer, cands, rect, texts[-1], "area", anchor, tolerance=0)


def _place_or_spiral(placer: _Placer, cands: list[MapLabel], own, text: str, kind: str, anchor,
                     tolerance: int = 0) -> MapLabel | None:
    """The best of ``cands``; when all collide, ``text`` further and further from its anchor."""
    got = placer.place(cands, own=own, tolerance=tolerance)
    if got is None:
        got = placer.place(_spiral(text, kind, anchor), own=own, tolerance=10 ** 9)
    return got


def _spiral(text: str, kind: str, anchor: tuple[int, int]) -> list[MapLabel]:
    size = _text_size(text, kind)
    out = []
    for r in range(8, 400, 6):
        for k in range(16):
            a = 2 * math.pi * k / 16
            box = _box_at(anchor[0] + r * math.cos(a), anchor[1] - r * math.sin(a), size)
            out.append(MapLabel(kind, text, box, anchor, leader=True))
    return out


def _turn_ranges(turns: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"S, 1-2, 5, 7-8"`` (0 is the start)."""
    parts = ["S"] if 0 in turns else []
    rest = sorted(t for t in turns if t > 0)
    i = 0
    while i < len(rest):
        j = i
        while j + 1 < len(rest) and rest[j + 1] == rest[j] + 1:
            j += 1
        parts.append(str(rest[i]) if i == j else f"{rest[i]}-{rest[j]}")
        i = j + 1
    return ", ".join(parts)


def _spots(points: list[tuple[int, int]]) -> list[list[int]]:
    """Pose indices grouped by where they are on the map (one label per spot)."""
    spots: list[list[int]] = []
    for i, (u, v) in enumerate(points):
        for spot in spots:
            su, sv = points[spot[0]]
            if abs(su - u) <= _SAME_SPOT_PX and abs(sv - v) <= _SAME_SPOT_PX:
                spot.append(i)
                break
        else:
            spots.append([i])
    return spots


def _pose_candidates(text: str, point: tuple[int, int]) -> list[MapLabel]:
    w, h = _text_size(text, "pose")
    u, v = point
    out = []
    for gap in (3, 8, 16, 26, 40, 58, 80, 110):
        rect = (u - _DOT, v - _DOT, u + _DOT + 1, v + _DOT + 1)
        out += [MapLabel("pose", text, box, point, leader=lead or gap > 8)
                for box, lead in _around(point, (w, h), rect, (gap,))]
    return out


def plan_episode_map(ep: EpisodeRecord, index: SceneIndex, width: int = MAP_WIDTH) -> EpisodeMap:
    """Where :func:`write_episode_map` puts everything: the layout's labels (stores,
    fixtures, areas with the assistant's handles), then one label per spot the shopper
    stood at (its turns as ranges: "S, 1-2", "4-6"), no two label boxes overlapping."""
    from situ_gym.som.labels import fixed_handles_by_id
    from situ_gym.som.minimap import map_transform

    scene = index.scene
    tf = map_transform(scene, (width, None))
    start = scene.layout.start
    turns = sorted(ep.turns, key=lambda t: t.turn)
    poses = [(start.x, start.y, start.yaw)] + [tuple(t.pose_after) for t in turns]
    points = [tf.to_px(x, y) for x, y, _ in poses]
    points = [(min(max(u, 0), tf.width - 1), min(max(v, 0), tf.height - 1)) for u, v in points]
    spots = _spots(points)
    dots = [(u - _DOT - 1, v - _DOT - 1, u + _DOT + 2, v + _DOT + 2) for u, v in points]
    footprints = []
    for r in [*(f.footprint for f in scene.fixtures)]:
        (x0, y0), (x1, y1) = tf.rect(r)
        footprints.append((x0, y0, x1 + 1, y1 + 1))
    arrow = _arrow_box(points[-1], poses[-1][2])
    placer = _Placer(tf.width, tf.height, soft=[*dots, arrow])
    _place_layout_labels(placer, scene, tf, fixed_handles_by_id(index, "assistant"))
    placer.soft = [*dots, *footprints, arrow]
    for spot in spots:
        text = _turn_ranges(spot)
        point = points[spot[0]]
        _place_or_spiral(placer, _pose_candidates(text, point), None, text, "pose", point, tolerance=0)
    return EpisodeMap(tf.width, tf.height, points, spots, placer.placed, poses[-1][2])


_ARROW = 22  # pixels: the last pose's heading arrow


def _arrow_tip(point: tuple[int, int], yaw: float) -> tuple[int, int]:
    a = math.radians(yaw)
    return int(round(point[0] + _ARROW * math.cos(a))), int(round(point[1] - _ARROW * math.sin(a)))


def _arrow_box(point, yaw) -> tuple[int, int, int, int]:
    tip = _arrow_tip(point, yaw)
    return (min(point[0], tip[0]) - 4, min(point[1], tip[1]) - 4, max(point[0], tip[0]) + 5, max(point[1], tip[1]) + 5)


def _draw_layout(scene, tf) -> np.ndarray:
    import cv2

    image = np.empty((tf.height, tf.width, 3), np.uint8)
    image[:] = _RGB["outside"]
    p0, p1 = tf.rect(scene.layout.bounds)
    cv2.rectangle(image, p0, p1, _RGB["floor"], -1)
    for store in scene.stores:
        p0, p1 = tf.rect(store.footprint)
        cv2.rectangle(image, p0, p1, _RGB["store"], -1)
    for wall in scene.layout.walls:
        p0, p1 = tf.rect(wall.footprint)
        cv2.rectangle(image, p0, p1, _RGB["wall"], -1)
    for store in scene.stores:
        p0, p1 = tf.rect(store.doorway)
        cv2.rectangle(image, p0, p1, _RGB["store"], -1)
    for area in scene.areas:
        p0, p1 = tf.rect(area.footprint)
        cv2.rectangle(image, p0, p1, _RGB["area_edge"], 1)
    for store in scene.stores:
        p0, p1 = tf.rect(store.footprint)
        cv2.rectangle(image, p0, p1, _RGB["store_edge"], 2)
    for fixture in scene.fixtures:
        p0, p1 = tf.rect(fixture.footprint)
        cv2.rectangle(image, p0, p1, _RGB["fixture"], -1)
        cv2.rectangle(image, p0, p1, _RGB["fixture_edge"], 1)
    return image


def _draw_labels(image: np.ndarray, labels: list[MapLabel]) -> np.ndarray:
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(image)
    draw = ImageDraw.Draw(canvas)
    for lab in labels:
        x0, y0, x1, y1 = lab.box
        font = _font(lab.font or lab.kind)
        if lab.leader:
            cx, cy = min(max(lab.anchor[0], x0), x1 - 1), min(max(lab.anchor[1], y0), y1 - 1)
            draw.line([lab.anchor, (cx, cy)], fill=_RGB["leader"], width=1)
        fill, ink, edge = {"store": (_RGB["store_edge"], _RGB["tag_text"], None),
                           "pose": ((255, 255, 255), _RGB["pose_text"], _RGB["path"]),
                           "fixture": (_RGB["fixture"], _RGB["text"], _RGB["fixture_edge"]),
                           "area": (None, _RGB["text"], None)}[lab.kind]
        if fill is not None:
            draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=fill, outline=edge)
        if lab.rotated:
            w, h = y1 - y0, x1 - x0
            tile = Image.new("RGBA", (w, h), (0, 0, 0, 0))
            ImageDraw.Draw(tile).multiline_text((_PAD, _PAD - 1), lab.text, font=font, fill=ink, spacing=0)
            tile = tile.rotate(90, expand=True)  # reads bottom to top
            canvas.paste(tile, (x0, y0), tile)
        else:
            draw.multiline_text((x0 + _PAD, y0 + _PAD - 1), lab.text, font=font, fill=ink, spacing=0,
                                align="center" if lab.kind == "area" else "left")
    return np.asarray(canvas).copy()


def write_episode_map(path: str | os.PathLike, ep: EpisodeRecord, index: SceneIndex) -> Path:
    """The store map (assistant's handles) with the shopper's path: the start (S), the pose
    after each turn (one label per spot, its turns as ranges) and the final heading; the
    placement is :func:`plan_episode_map`'s."""
    import cv2

    plan = plan_episode_map(ep, index)
    from situ_gym.som.minimap import map_transform

    image = _draw_layout(index.scene, map_transform(index.scene, (plan.width, None)))
    layout = [lab for lab in plan.labels if lab.kind != "pose"]
    image = _draw_labels(image, layout)
    for a, b in zip(plan.points, plan.points[1:], strict=False):
        cv2.line(image, a, b, _RGB["path"], 2, cv2.LINE_AA)
    for u, v in plan.points:
        cv2.circle(image, (u, v), _DOT, (255, 255, 255), -1, cv2.LINE_AA)
        cv2.circle(image, (u, v), _DOT - 1, _RGB["path"], -1, cv2.LINE_AA)
    last = plan.points[-1]
    cv2.arrowedLine(image, last, _arrow_tip(last, plan.heading), (255, 255, 255), 6, cv2.LINE_AA, tipLength=0.4)
    cv2.arrowedLine(image, last, _arrow_tip(last, plan.heading), _RGB["path"], 3, cv2.LINE_AA, tipLength=0.4)
    image = _draw_labels(image, [lab for lab in plan.labels if lab.kind == "pose"])
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    return out


def _read_marks(run: Path, ep: EpisodeRecord) -> dict[str, list[list[str]]]:
    """The legends of the frames the episode's page can show. Only the names
    :func:`frame_name` gives this episode are looked up, when the record lists them: a
    stored ``frames`` entry is data, never a path to follow out of the run folder."""
    listed = set(ep.frames)
    out = {}
    for turn in sorted({t.turn for t in ep.turns} | {len(ep.turns) + 1}):
        for role in ("assistant", "user", "map"):
            rel = frame_name(ep.episode_id, turn, role)
            if rel not in listed:
                continue
            legend = run / marks_name(rel)
            try:
                pairs = jsonl.loads(legend.read_text(encoding="utf-8")) if legend.exists() else []
            except (OSError, ValueError):
                continue  # a damaged legend only loses the names under that frame
            if isinstance(pairs, list):  # [[handle, entity id], ...]; anything else in it is skipped
                out[rel] = [[str(h), str(e)] for h, e in (p for p in pairs if isinstance(p, list) and len(p) == 2)]
    return out


def _summary_html(episodes: list[EpisodeRecord], ratings: list[dict[str, Any]] | None) -> str:
    """Per env/agent cohort: episodes, purchases, mean turns, mean episode reward, crashes and terminations."""
    groups: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for ep in episodes:
        groups.setdefault((ep.env_id, ep.agent), []).append(ep)
    rows = []
    for (env, agent), eps in groups.items():
        n = len(eps)
        bought = sum(bool(ep.cart) for ep in eps)
        ref = sum(purchase_kind(ep) == "reference" for ep in eps)
        turns = sum(len(ep.turns) for ep in eps) / n
        totals = [r for r in (episode_reward(ep) for ep in eps) if r is not None]
        reward = f"{sum(totals) / len(totals):.3f}" if totals else "-"
        ends = ", ".join(f"{k} {v}" for k, v in sorted(Counter(ep.termination for ep in eps).items()))
        crashed = sum(ep.termination == "error" for ep in eps)
        rows.append(f"<tr><td>{_esc(env)} / {_esc(agent)}</td><td>{n}</td><td>{bought} ({100 * bought / n:.1f}%)</td>"
                    f"<td>{ref}</td><td>{turns:.1f}</td><td>{reward}</td>"
                    f"<td class={'bad' if crashed else 'ok'}>{crashed}</td><td>{_esc(ends)}</td></tr>")
    judge = ratings[0].get("judge") if ratings else None
    judged = (f"Dialogue ratings come from the <b>{_esc(str(judge))}</b> judge (not an LLM), 1-5."
              if judge else "No dialogue judge was run.")
    users = ", ".join(sorted({ep.user for ep in episodes})) or "-"
    return ("<h2>Summary</h2><table class=summary><tr><th>env / agent</th><th>episodes</th><th>purchases (SR)</th>"
            "<th>of them reference items</th><th>mean turns</th><th>mean episode reward</th><th>crashed</th>"
            "<th>terminations</th></tr>" + "".join(rows) + "</table>"
            f"<p class=muted>Shopper: {_esc(users)}. {judged} SR here is the plain share of episodes; report.md "
            "gives the paper's subset mean ± SD. Episode reward: the sum of a turn's R_total over the episode.</p>")


# Sorting and filtering of index.html's episode table, run from file:// with no library. It
# reads the rows' data-* attributes and cells' text only and writes nothing but the rows'
# order, their hidden flag and a count (textContent): no text of the run becomes markup.
_INDEX_JS = """(function () {
  var table = document.getElementById("episodes"), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  rows.forEach(function (r, i) { r.dataset.order = i; });
  var ids = ["outcome", "termination", "subset", "agent"];
  var tmin = document.getElementById("f-tmin"), tmax = document.getElementById("f-tmax");
  function apply() {
    var lo = tmin.value === "" ? -Infinity : +tmin.value, hi = tmax.value === "" ? Infinity : +tmax.value, n = 0;
    rows.forEach(function (r) {
      var ok = ids.every(function (k) {
        var v = document.getElementById("f-" + k).value;
        return v === "" || r.dataset[k] === v;
      }) && +r.dataset.turns >= lo && +r.dataset.turns <= hi;
      r.hidden = !ok;
      if (ok) n++;
    });
    document.getElementById("shown").textContent = n + " of " + rows.length + " episodes shown";
  }
  ids.map(function (k) { return document.getElementById("f-" + k); }).concat([tmin, tmax])
    .forEach(function (el) { el.addEventListener("input", apply); el.addEventListener("change", apply); });
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1, num = th.dataset.type === "num";
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      function key(r) {
        var c = r.cells[col], v = c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent;
        return num ? (v === "" ? -Infinity : +v) : v.toLowerCase();
      }
      rows.slice().sort(function (a, b) {
        var x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : 0) * dir || a.dataset.order - b.dataset.order;
      }).forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();"""


def _select(key: str, label: str, values: list[tuple[str, str]]) -> str:
    options = "".join(f'<option value="{_esc(v)}">{_esc(text)}</option>' for v, text in values)
    return f'<label>{label} <select id="f-{key}"><option value="">all</option>{options}</select></label>'


def _filters_html(episodes: list[EpisodeRecord]) -> str:
    """The filter bar over the episode table: outcome, termination, subset, agent, turns range."""
    kinds = [(k, _PURCHASE_WORDS[k]) for k in PURCHASE_CLASSES if any(purchase_kind(e) == k for e in episodes)]
    terms = sorted({ep.termination for ep in episodes})
    subsets = sorted({ep.subset for ep in episodes})
    agents = sorted({ep.agent for ep in episodes})
    most = max((len(ep.turns) for ep in episodes), default=0)
    return ("<p class=filters>" + _select("outcome", "purchase", kinds)
            + _select("termination", "termination", [(t, t) for t in terms])
            + _select("subset", "subset", [(str(s), str(s)) for s in subsets])
            + _select("agent", "agent", [(a, a) for a in agents])
            + f'<label>turns <input id=f-tmin type=number min=0 max={most} placeholder=min> to '
            f'<input id=f-tmax type=number min=0 max={most} placeholder=max></label>'
            f'<span id=shown class=muted>{len(episodes)} episodes</span></p>')


def _index_row(ep: EpisodeRecord, page: str, rating: dict[str, Any] | None) -> str:
    kind = purchase_kind(ep)
    total = episode_reward(ep)
    overall = "" if rating is None else str(rating.get("Overall", ""))
    try:
        overall_v = f"{float(overall):g}"
    except ValueError:
        overall_v = ""
    return (f'<tr data-outcome="{kind}" data-termination="{_esc(ep.termination)}" data-subset="{ep.subset}" '
            f'data-agent="{_esc(ep.agent)}" data-turns="{len(ep.turns)}">'
            f"<td><a href=\"{_esc(page)}\">{_esc(ep.episode_id)}</a></td><td>{_esc(ep.env_id)}</td>"
            f"<td>{_esc(ep.agent)}</td><td data-v={ep.subset}>{ep.subset}</td>"
            f"<td data-v={len(ep.turns)}>{len(ep.turns)}</td>"
            f'<td class={PURCHASE_CLASSES[kind]} data-v="{"210"[list(PURCHASE_CLASSES).index(kind)]}">'
            f"{_PURCHASE_WORDS[kind]}</td><td>{_esc(ep.termination)}</td>"
            f'<td data-v="{"" if total is None else f"{total:.6f}"}">{"-" if total is None else f"{total:.3f}"}</td>'
            f'<td data-v="{overall_v}">{_esc(overall)}</td></tr>')


def write_viewer(
    run_dir: str | os.PathLike,
    episodes: list[EpisodeRecord],
    indexes: dict[str, SceneIndex] | None = None,
    ratings: list[dict[str, Any]] | None = None,
    tasks: dict[str, Any] | None = None,
) -> Path:
    """Write ``index.html``, ``episodes/<id>.html`` and ``maps/<id>.png`` into the run dir
    (episodes in task order); returns index.html. ``tasks`` (task id -> Task) give the
    pages their goal in words; by default the packaged task banks of the stores in ``indexes``."""
    from eval.io import task_order

    run = Path(run_dir)
    (run / "episodes").mkdir(parents=True, exist_ok=True)
    indexes = indexes or {}
    if tasks is None:
        from eval.aggregate import load_tasks

        tasks = load_tasks(indexes) if indexes else {}
    if ratings is not None and len(ratings) != len(episodes):
        raise ValueError(f"need one rating per episode, got {len(ratings)} for {len(episodes)}")
    rated = {id(ep): r for ep, r in zip(episodes, ratings or [], strict=False)}
    episodes = task_order(episodes)
    ratings = [rated[id(ep)] for ep in episodes] if ratings is not None else None
    rows = []
    for i, ep in enumerate(episodes):
        page = f"episodes/{safe_name(ep.episode_id)}.html"
        rating = ratings[i] if ratings else None
        neighbours = (episodes[i - 1].episode_id if i > 0 else None,
                      episodes[i + 1].episode_id if i + 1 < len(episodes) else None)
        index = indexes.get(ep.store)
        map_rel = None
        if index is not None:
            map_rel = map_name(ep.episode_id)
            write_episode_map(run / map_rel, ep, index)
        task = tasks.get(ep.task_id)
        html_page = episode_page(ep, index, rating, neighbours, _read_marks(run, ep), map_rel, task)
        (run / page).write_text(html_page, encoding="utf-8")
        rows.append(_index_row(ep, page, rating))
    imgs = "".join(f'<a href="{n}" target="_blank"><img src="{n}" alt="{n}"></a>' for n in
                   FIGURES if (run / n).exists())
    report = '<p><a href="report.md">report.md</a> · <a href="metrics.json">metrics.json</a></p>'
    notes = []
    if episodes and not any(ep.frames for ep in episodes):
        notes.append(_NO_FRAMES)
    if any(ep.turns for ep in episodes) and not any(t.reward for ep in episodes for t in ep.turns):
        notes.append(_NO_REWARD)
    judge = ratings[0].get("judge") if ratings else None
    overall = f"overall ({_esc(str(judge))} judge)" if judge else "overall"
    heads = [("episode", "text"), ("env", "text"), ("agent", "text"), ("subset", "num"), ("turns", "num"),
             ("purchase", "num"), ("termination", "text"), ("episode reward", "num"), (overall, "num")]
    head = "".join(f"<th data-type={kind} title=\"sort\">{name}</th>" for name, kind in heads)
    html = (
        f"<!doctype html><html><head><meta charset=utf-8><title>{_esc(run.name)}</title>"
        f"<style>{_CSS}</style></head><body><h1>Run {_esc(run.name)}</h1>{report}"
        + _summary_html(episodes, ratings) + "".join(f"<p class=note>{n}</p>" for n in notes)
        + "<h2>Episodes (task order)</h2><p class=muted>Click a column header to sort (again to reverse); "
        "the filters show only the episodes that match all of them.</p>" + _filters_html(episodes)
        + f"<table id=episodes class=sortable><thead><tr>{head}</tr></thead><tbody>" + "".join(rows)
        + f"</tbody></table><h2>Figures</h2><div class=plots>{imgs}</div><script>{_INDEX_JS}</script></body></html>"
    )
    index_path = run / "index.html"
    index_path.write_text(html, encoding="utf-8")
    return index_path
