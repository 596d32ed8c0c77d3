"""Self-contained HTML trajectory viewer: ``index.html`` plus one page per episode, showing
both roles' SoM frames (files beside the pages), the dialogue, expected vs taken actions,
the ranking by name and the reward components. All text is escaped."""

from __future__ import annotations

import json
import os
import re
from html import escape
from pathlib import Path
from typing import Any

from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["safe_name", "frame_name", "episode_page", "write_viewer"]

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
.turn{border:1px solid #bbb;border-radius:6px;padding:8px;margin:10px 0}
.frames img{max-width:420px;margin-right:8px;border:1px solid #999}
.ok{color:#060}.bad{color:#a00}.muted{color:#666;font-size:90%}pre{white-space:pre-wrap;margin:0}"""


def safe_name(episode_id: str) -> str:
    """A filesystem-safe name for an episode id (used for pages and frame folders)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", episode_id)


def frame_name(episode_id: str, turn: int, role: str) -> str:
    """Relative path (from the run dir) of the frame a role saw when turn ``turn`` began
    (``turn = T + 1`` is the view after the last action)."""
    return f"frames/{safe_name(episode_id)}/t{turn:02d}_{role}.png"


def _name(eid: str | None, index: SceneIndex | None) -> str:
    if eid is None:
        return "-"
    if index is not None and eid in index.entities:
        return f"{index.name(eid)} ({eid})"
    return eid


def _call(call: ToolCall | None, index: SceneIndex | None) -> str:
    if call is None:
        return "<i>none</i>"
    args = escape(json.dumps(call.arguments, ensure_ascii=False))
    target = f" → {escape(_name(call.target_id, index))}" if call.target_id else ""
    flags = "" if call.legal and call.valid else f" <span class=bad>[{'illegal' if not call.legal else 'invalid'}]</span>"
    err = f" <span class=muted>{escape(call.error)}</span>" if call.error else ""
    return f"<b>{escape(call.name)}</b> {args}{target}{flags}{err}"


def _turn_html(ep: EpisodeRecord, t: TurnRecord, index: SceneIndex | None, frames: set[str]) -> str:
    imgs = []
    for role in ("assistant", "user"):
        rel = frame_name(ep.episode_id, t.turn, role)
        if rel in frames:
            imgs.append(f'<figure style="display:inline-block"><img src="../{escape(rel)}" alt="{role} view">'
                        f"<figcaption>{role} view</figcaption></figure>")
    exp, act = t.expected_user_action, t.user_action
    follow = ""
    if exp is not None:
        same = act is not None and act.name == exp.name
        follow = f" <span class={'ok' if same else 'bad'}>{'followed' if same else 'not followed'}</span>"
    ranking = ", ".join(escape(_name(pid, index)) for pid in t.ranking) or "<i>empty</i>"
    reward = ", ".join(f"{escape(k)}={'-' if v is None else f'{v:.3f}'}" for k, v in t.reward.items())
    errors = "".join(f"<li class=bad>{escape(e)}</li>" for e in t.assistant_errors)
    result = t.result
    rows = [
        ("Assistant", f"<pre>{escape(t.response)}</pre>"),
        ("Action", f"<b>{escape(str(t.action_type))}</b> <span class=muted>"
                   f"{escape(json.dumps(t.action, ensure_ascii=False)) if t.action else ''}</span>"
                   + (f"<br>goal: {escape(_name(t.navigation_goal_id, index))}" if t.navigation_goal_id else "")
                   + (f"<br>recommends: {escape(_name(t.recommended_id, index))}" if t.recommended_id else "")),
        ("Expected user action", _call(exp, index) + follow),
        ("User", f"<pre>{escape(t.user_utterance)}</pre>"),
        ("User action", _call(act, index)),
        ("Result", "-" if result is None else
         f"<span class={'ok' if result.ok else 'bad'}>{escape(result.message)}</span> "
         f"<span class=muted>moved {result.displacement:.2f} m</span>"),
        ("Ranking", ranking),
        ("Visible after", escape(", ".join(_name(e, index) for e in t.visible_after)) or "-"),
        ("Cart / held", escape(", ".join(_name(e, index) for e in t.cart) or "empty")
         + " / " + escape(_name(t.held_item, index))),
    ]
    if reward:
        rows.append(("Reward", reward))
    if errors:
        rows.append(("Output errors", f"<ul>{errors}</ul>"))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return (f'<div class=turn id="t{t.turn}"><h3>Turn {t.turn}</h3>'
            f'<div class=frames>{"".join(imgs)}</div><table>{body}</table></div>')


def episode_page(
    ep: EpisodeRecord,
    index: SceneIndex | None = None,
    rating: dict[str, Any] | None = None,
    neighbours: tuple[str | None, str | None] = (None, None),
) -> str:
    """One episode as a standalone HTML page (frames referenced relative to ``episodes/``);
    ``neighbours`` are the previous / next episode ids for the page's links."""
    frames = set(ep.frames)
    links = ['<a href="../index.html">all episodes</a>']
    for label, other in zip(("previous", "next"), neighbours, strict=True):
        if other is not None:
            links.append(f'<a href="{escape(safe_name(other))}.html">{label}: {escape(other)}</a>')
    parts = [
        "<!doctype html><html><head><meta charset=utf-8>",
        f"<title>{escape(ep.episode_id)}</title><style>{_CSS}</style></head><body>",
        "<p>" + " · ".join(links) + "</p>",
        f"<h1>{escape(ep.episode_id)}</h1>",
        "<table>",
    ]
    meta = [("env", ep.env_id), ("task / profile / subset", f"{ep.task_id} / {ep.profile_id} / {ep.subset}"),
            ("agent / user / seed", f"{ep.agent} / {ep.user} / {ep.seed}"),
            ("target", _name(ep.target_id, index)), ("budget", f"{ep.budget:.2f}"),
            ("reference set", ", ".join(_name(e, index) for e in ep.reference_set)),
            ("cart", ", ".join(_name(e, index) for e in ep.cart) or "empty"),
            ("termination", ep.termination)]
    parts += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta]
    if rating:
        parts.append("<tr><th>dialogue ratings</th><td>" + escape(
            ", ".join(f"{k}: {v}" for k, v in rating.items())) + "</td></tr>")
    parts.append("</table>")
    if ep.error:
        parts.append(f"<h2 class=bad>Error</h2><pre>{escape(ep.error)}</pre>")
    for t in sorted(ep.turns, key=lambda t: t.turn):
        parts.append(_turn_html(ep, t, index, frames))
    final = [r for r in ("assistant", "user") if frame_name(ep.episode_id, len(ep.turns) + 1, r) in frames]
    if final:
        parts.append("<div class=turn><h3>Final view</h3><div class=frames>" + "".join(
            f'<img src="../{escape(frame_name(ep.episode_id, len(ep.turns) + 1, r))}" alt="{r} view">' for r in final
        ) + "</div></div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_viewer(
    run_dir: str | os.PathLike,
    episodes: list[EpisodeRecord],
    indexes: dict[str, SceneIndex] | None = None,
    ratings: list[dict[str, Any]] | None = None,
) -> Path:
    """Write ``index.html`` and ``episodes/<id>.html`` into the run dir; returns index.html."""
    run = Path(run_dir)
    (run / "episodes").mkdir(parents=True, exist_ok=True)
    indexes = indexes or {}
    rows = []
    for i, ep in enumerate(episodes):
        page = f"episodes/{safe_name(ep.episode_id)}.html"
        rating = ratings[i] if ratings else None
        neighbours = (episodes[i - 1].episode_id if i > 0 else None,
                      episodes[i + 1].episode_id if i + 1 < len(episodes) else None)
        (run / page).write_text(episode_page(ep, indexes.get(ep.store), rating, neighbours), encoding="utf-8")
        ok = bool(ep.cart)
        rows.append(
            f"<tr><td><a href=\"{escape(page)}\">{escape(ep.episode_id)}</a></td><td>{escape(ep.env_id)}</td>"
            f"<td>{escape(ep.agent)}</td><td>{ep.subset}</td><td>{len(ep.turns)}</td>"
            f"<td class={'ok' if ok else 'bad'}>{'yes' if ok else 'no'}</td><td>{escape(ep.termination)}</td>"
            f"<td>{'' if rating is None else escape(str(rating.get('Overall', '')))}</td></tr>"
        )
    imgs = "".join(f'<img src="{n}" alt="{n}" style="max-width:32%">' for n in
                   ("sr_by_turn.png", "cgv_gain.png", "action_shares.png") if (run / n).exists())
    report = '<p><a href="report.md">report.md</a> · <a href="metrics.json">metrics.json</a></p>'
    html = (
        f"<!doctype html><html><head><meta charset=utf-8><title>{escape(run.name)}</title>"
        f"<style>{_CSS}</style></head><body><h1>Run {escape(run.name)}</h1>{report}<div>{imgs}</div>"
        "<table><tr><th>episode</th><th>env</th><th>agent</th><th>subset</th><th>turns</th>"
        "<th>purchase</th><th>termination</th><th>overall</th></tr>" + "".join(rows) + "</table></body></html>"
    )
    index_path = run / "index.html"
    index_path.write_text(html, encoding="utf-8")
    return index_path
