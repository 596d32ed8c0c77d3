// The researcher's progress page: reads /api/admin with the token from this page's address.
"use strict";

const $ = (id) => document.getElementById(id);
const TOKEN = new URLSearchParams(location.search).get("token") || "";
window.progress = null;  // read by the browser tests

function cell(text, numeric) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "-" : String(text);
  if (numeric) td.className = "n";
  return td;
}

function row(values, numeric) {
  const tr = document.createElement("tr");
  values.forEach((v, i) => tr.appendChild(cell(v, numeric.includes(i))));
  return tr;
}

async function load() {
  const res = await fetch("/api/admin", { headers: { Authorization: "Bearer " + TOKEN } });
  const data = await res.json().catch(() => ({ error: "the server sent an unreadable reply" }));
  if (!res.ok) throw new Error(data.error || ("request failed (" + res.status + ")"));
  window.progress = data;
  $("env").textContent = data.env;
  $("tasks").textContent = data.tasks.join(", ");
  $("assistants").tBodies[0].replaceChildren(...data.assistants.map((a) =>
    row([a.assistant, a.planned, a.in_progress, a.done, a.errored, a.rated], [1, 2, 3, 4, 5])));
  $("participants").tBodies[0].replaceChildren(...data.participants.map((p) =>
    row([p.participant_id, p.stage, p.planned, p.done, p.errored, p.rated, p.current, p.turns], [2, 3, 4, 5, 7])));
  $("nobody").hidden = data.participants.length > 0;
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  $("error").hidden = true;
  document.body.dataset.loaded = "yes";
}

function refresh() {
  load().catch((e) => { $("error").textContent = e.message; $("error").hidden = false; });
}

$("refresh").addEventListener("click", refresh);
refresh();
setInterval(refresh, 15000);
