"""Self-contained HTML trajectory viewer: ``index.html`` (run summary, plots, episodes in task
order) plus one page per episode, showing the shopper's path on the store map, both roles'
SoM frames with a legend of their marks (when the run saved frames), the dialogue, expected
vs taken actions, the ranking by name and the reward components. All text is escaped
(:func:`_esc`: markup characters and quotes as entities, lone surrogates as U+FFFD, so a
page is always valid UTF-8), and every file name derived from an episode id is one plain
path segment (:func:`safe_name`)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from eval.plots import FIGURES
from situ_gym import jsonl
from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["safe_name", "frame_name", "marks_name", "map_name", "episode_page", "write_episode_map", "write_viewer"]

MAP_WIDTH = 480  # pixels; the episode map is shown at this width

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
.turn{border:1px solid #bbb;border-radius:6px;padding:8px;margin:10px 0}
.frames img{width:240px;margin-right:8px;border:1px solid #999}
.frames figure{display:inline-block;margin:0 8px 0 0;vertical-align:top}
.frames figcaption{font-size:85%;color:#444;max-width:240px}
.legend{font-size:88%;margin:4px 0}.plots img{width:49%;max-width:640px}
.summary td:last-child,.summary th:last-child{text-align:left}
.note{background:#fff6d8;border:1px solid #e0c060;padding:6px 10px;border-radius:4px}
.summary td,.summary th{text-align:right}.summary td:first-child,.summary th:first-child{text-align:left}
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


def _turn_html(ep: EpisodeRecord, t: TurnRecord, index: SceneIndex | None, frames: set[str],
               marks: dict[str, list[list[str]]] | None = None) -> str:
    when = f"as turn {t.turn} began (before the shopper acts)"
    imgs = _frames_html(ep, t.turn, index, frames, marks or {}, when)
    exp, act = t.expected_user_action, t.user_action
    follow = ""
    if exp is not None:
        same = act is not None and act.name == exp.name
        follow = f" <span class={'ok' if same else 'bad'}>{'followed' if same else 'not followed'}</span>"
    ranking = ", ".join(_esc(_name(pid, index)) for pid in t.ranking) or "<i>empty</i>"
    reward = ", ".join(f"{_esc(k)}={'-' if v is None else f'{v:.3f}'}" for k, v in t.reward.items())
    errors = "".join(f"<li class=bad>{_esc(e)}</li>" for e in t.assistant_errors)
    result = t.result
    rows = [
        ("Assistant", f"<pre>{_esc(t.response)}</pre>"),
        ("Action", f"<b>{_esc(str(t.action_type))}</b> <span class=muted>"
                   f"{_esc(json.dumps(t.action, ensure_ascii=False)) if t.action else ''}</span>"
                   + (f"<br>goal: {_esc(_name(t.navigation_goal_id, index))}" if t.navigation_goal_id else "")
                   + (f"<br>recommends: {_esc(_name(t.recommended_id, index))}" if t.recommended_id else "")),
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
    if reward:
        rows.append(("Reward", reward))
    if errors:
        rows.append(("Output errors", f"<ul>{errors}</ul>"))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<div class=turn id="t{t.turn}"><h3>Turn {t.turn}</h3>{imgs}<table>{body}</table></div>'


def episode_page(
    ep: EpisodeRecord,
    index: SceneIndex | None = None,
    rating: dict[str, Any] | None = None,
    neighbours: tuple[str | None, str | None] = (None, None),
    marks: dict[str, list[list[str]]] | None = None,
    map_rel: str | None = None,
) -> str:
    """One episode as a standalone HTML page (frames referenced relative to ``episodes/``);
    ``neighbours`` are the previous / next episode ids for the page's links, ``marks`` the
    legends of saved frames (frame path -> [[handle, entity id], ...]) and ``map_rel`` the
    episode's map with the shopper's path."""
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
        "<table>",
    ]
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
    notes = []
    if not frames:
        notes.append(_NO_FRAMES)
    if ep.turns and not any(t.reward for t in ep.turns):
        notes.append(_NO_REWARD)
    parts += [f"<p class=note>{n}</p>" for n in notes]
    if map_rel:
        parts.append(f'<figure><a href="../{_esc(map_rel)}" target="_blank"><img src="../{_esc(map_rel)}" '
                     f'width={MAP_WIDTH} alt="store map"></a><figcaption class=muted>Store map (assistant\'s '
                     "handles): the shopper's start (S) and pose after each turn (numbered; lines join consecutive "
                     "poses, not the walked route), last pose with its heading.</figcaption></figure>")
    if ep.error:
        parts.append(f"<h2 class=bad>Error</h2><pre>{_esc(ep.error)}</pre>")
    for t in sorted(ep.turns, key=lambda t: t.turn):
        parts.append(_turn_html(ep, t, index, frames, marks))
    final = _frames_html(ep, len(ep.turns) + 1, index, frames, marks or {}, "after the last action")
    if final:
        parts.append(f"<div class=turn><h3>Final view</h3>{final}</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_episode_map(path: str | os.PathLike, ep: EpisodeRecord, index: SceneIndex) -> Path:
    """The store map (assistant's handles) with the shopper's path: start, the pose after
    each turn (numbered) and the final heading."""
    import cv2

    from situ_gym.backends.base import Pose
    from situ_gym.som.minimap import map_transform, render_minimap

    scene = index.scene
    start = scene.layout.start
    poses = [(start.x, start.y, start.yaw)] + [tuple(t.pose_after) for t in sorted(ep.turns, key=lambda t: t.turn)]
    x, y, yaw = poses[-1]
    image = render_minimap(scene, index, Pose(x, y, yaw, 0.0), "assistant", (MAP_WIDTH, None))
    tf = map_transform(scene, (image.shape[1], image.shape[0]))
    points = [tf.to_px(px, py) for px, py, _ in poses]
    bgr = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2BGR)
    for a, b in zip(points, points[1:], strict=False):
        cv2.line(bgr, a, b, (40, 40, 200), 1, cv2.LINE_AA)
    labels = ["S"] + [str(i) for i in range(1, len(points))]
    drawn: dict[tuple[int, int], int] = {}
    for (u, v), label in zip(points, labels, strict=True):
        k = drawn.get((u, v), 0)  # turns that did not move stack their numbers
        drawn[(u, v)] = k + 1
        cv2.circle(bgr, (u, v), 3, (40, 40, 200), -1, cv2.LINE_AA)
        cv2.putText(bgr, label, (u + 4, v - 4 - 10 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (20, 20, 120), 1, cv2.LINE_AA)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), bgr)
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
    """Per env/agent cohort: episodes, purchases, mean turns, crashes and terminations."""
    groups: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for ep in episodes:
        groups.setdefault((ep.env_id, ep.agent), []).append(ep)
    rows = []
    for (env, agent), eps in groups.items():
        n = len(eps)
        bought = sum(bool(ep.cart) for ep in eps)
        turns = sum(len(ep.turns) for ep in eps) / n
        ends = ", ".join(f"{k} {v}" for k, v in sorted(Counter(ep.termination for ep in eps).items()))
        crashed = sum(ep.termination == "error" for ep in eps)
        rows.append(f"<tr><td>{_esc(env)} / {_esc(agent)}</td><td>{n}</td><td>{bought} ({100 * bought / n:.1f}%)</td>"
                    f"<td>{turns:.1f}</td><td class={'bad' if crashed else 'ok'}>{crashed}</td>"
                    f"<td>{_esc(ends)}</td></tr>")
    judge = ratings[0].get("judge") if ratings else None
    judged = (f"Dialogue ratings come from the <b>{_esc(str(judge))}</b> judge (not an LLM), 1-5."
              if judge else "No dialogue judge was run.")
    users = ", ".join(sorted({ep.user for ep in episodes})) or "-"
    return ("<h2>Summary</h2><table class=summary><tr><th>env / agent</th><th>episodes</th><th>purchases (SR)</th>"
            "<th>mean turns</th><th>crashed</th><th>terminations</th></tr>" + "".join(rows) + "</table>"
            f"<p class=muted>Shopper: {_esc(users)}. {judged} SR here is the plain share of episodes; report.md "
            "gives the paper's subset mean ± SD.</p>")


def write_viewer(
    run_dir: str | os.PathLike,
    episodes: list[EpisodeRecord],
    indexes: dict[str, SceneIndex] | None = None,
    ratings: list[dict[str, Any]] | None = None,
) -> Path:
    """Write ``index.html``, ``episodes/<id>.html`` and ``maps/<id>.png`` into the run dir
    (episodes in task order); returns index.html."""
    from eval.io import task_order

    run = Path(run_dir)
    (run / "episodes").mkdir(parents=True, exist_ok=True)
    indexes = indexes or {}
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
        html_page = episode_page(ep, index, rating, neighbours, _read_marks(run, ep), map_rel)
        (run / page).write_text(html_page, encoding="utf-8")
        ok = bool(ep.cart)
        rows.append(
            f"<tr><td><a href=\"{_esc(page)}\">{_esc(ep.episode_id)}</a></td><td>{_esc(ep.env_id)}</td>"
            f"<td>{_esc(ep.agent)}</td><td>{ep.subset}</td><td>{len(ep.turns)}</td>"
            f"<td class={'ok' if ok else 'bad'}>{'yes' if ok else 'no'}</td><td>{_esc(ep.termination)}</td>"
            f"<td>{'' if rating is None else _esc(str(rating.get('Overall', '')))}</td></tr>"
        )
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
    html = (
        f"<!doctype html><html><head><meta charset=utf-8><title>{_esc(run.name)}</title>"
        f"<style>{_CSS}</style></head><body><h1>Run {_esc(run.name)}</h1>{report}"
        + _summary_html(episodes, ratings) + "".join(f"<p class=note>{n}</p>" for n in notes)
        + f"<div class=plots>{imgs}</div><h2>Episodes (task order)</h2>"
        "<table><tr><th>episode</th><th>env</th><th>agent</th><th>subset</th><th>turns</th>"
        f"<th>purchase</th><th>termination</th><th>{overall}</th></tr>" + "".join(rows) + "</table></body></html>"
    )
    index_path = run / "index.html"
    index_path.write_text(html, encoding="utf-8")
    return index_path
