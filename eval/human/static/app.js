// SituRec human evaluation: one page, the server holds all state (reload or restart resumes).
"use strict";

const TOKEN_KEY = "siturec-token";
const $ = (id) => document.getElementById(id);
let options = null;
let current = null;
window.currentState = () => current;  // read by the browser tests

function token() { return localStorage.getItem(TOKEN_KEY); }

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (token()) headers["Authorization"] = "Bearer " + token();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await res.json(); } catch (e) { data = { error: "the server sent an unreadable reply" }; }
  if (res.status === 401) { localStorage.removeItem(TOKEN_KEY); }
  if (!res.ok) { throw new Error(data.error || ("request failed (" + res.status + ")")); }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function showNotice(state) {
  for (const id of ["notice-briefing", "notice-done"]) {
    $(id).textContent = state.notice || "";
    $(id).hidden = !state.notice;
  }
}

function dialogueLines(lines, label) {
  return lines.map((line) => {
    const who = line.speaker === "assistant" ? label : line.speaker === "you" ? "You" : "Action";
    const li = el("li", "", "line " + line.speaker);
    li.append(el("b", who + ": "), el("span", line.text));
    return li;
  });
}

function money(v) { return "$" + Number(v).toFixed(2); }

function showPage(name) {
  for (const page of ["join", "briefing", "chat", "rating", "done"]) {
    $("page-" + page).hidden = page !== name;
  }
  document.body.dataset.page = name;
}

function fillSelect(select, values, labels) {
  select.replaceChildren();
  values.forEach((v, i) => {
    const opt = el("option", labels ? labels[i] : v);
    opt.value = v;
    select.appendChild(opt);
  });
}

async function render(state) {
  current = state;
  showError("");
  $("whoami").hidden = false;
  $("pid").textContent = state.participant_id;
  $("resume-code").textContent = token();
  $("progress").textContent = state.stage === "done" ? "finished"
    : "conversation " + (state.index + 1) + " of " + state.total;
  showNotice(state);
  hideConfirm();
  if (state.stage === "briefing") renderBriefing(state);
  else if (state.stage === "chat") renderChat(state);
  else if (state.stage === "rating") renderRating(state);
  else showPage("done");
}

function renderBriefing(state) {
  const b = state.briefing;
  $("briefing-title").textContent = "Conversation " + (state.index + 1) + " of " + state.total + ": " + state.assistant_label;
  $("persona").textContent = b.persona;
  $("request").textContent = b.request;
  $("budget").textContent = b.budget.toFixed(2);
  $("details").replaceChildren(...b.details.map((d) => el("li", d)));
  $("start-label").textContent = state.assistant_label;
  showPage("briefing");
}

function renderChat(state) {
  $("chat-label").textContent = state.assistant_label;
  $("turn").textContent = state.turn;
  $("max-turns").textContent = state.max_turns;
  $("chat-request").textContent = state.briefing.request + " Budget: $" + state.briefing.budget.toFixed(2) + ".";
  $("view").src = state.view;
  $("map").src = state.map;
  $("dialogue").replaceChildren(...dialogueLines(state.dialogue, state.assistant_label));
  const dialogue = $("dialogue");
  dialogue.scrollTop = dialogue.scrollHeight;
  $("map-key").replaceChildren(...state.map_key.map((k) => {
    const li = el("li");
    li.append(el("b", k.handle), document.createTextNode(" " + k.name));
    return li;
  }));
  $("held").textContent = state.held ? state.held.name + " [" + state.held.handle + "]" : "nothing";
  $("cart").textContent = state.cart.length ? state.cart.join(", ") : "empty";
  $("inspected").replaceChildren(...state.inspected.map((p) => {
    const card = el("div", "", "inspected");
    card.append(el("b", p.name + " · " + money(p.price)));
    const list = el("ul");
    for (const d of p.details) list.appendChild(el("li", d));
    if (p.labels.length) list.appendChild(el("li", "also: " + p.labels.join(", ")));
    card.appendChild(list);
    return card;
  }));
  const tool = $("tool");
  const previous = tool.value;
  fillSelect(tool, state.tools.map((t) => t.name), state.tools.map((t) => t.name.replaceAll("_", " ")));
  if (state.tools.some((t) => t.name === previous)) tool.value = previous;
  renderArgs();
  $("utterance").maxLength = options ? options.max_utterance : 500;
  showPage("chat");
}

function renderArgs() {
  const spec = current.tools.find((t) => t.name === $("tool").value);
  $("tool-help").textContent = spec ? spec.description : "";
  const box = $("args");
  box.replaceChildren();
  if (!spec) return;
  for (const arg of spec.arguments) {
    const label = el("label", arg.name + " ");
    let input;
    if (arg.kind === "angle") {
      input = el("input");
      input.type = "number"; input.min = "1"; input.max = "180"; input.step = "1"; input.value = "30";
    } else if (arg.kind === "choice") {
      input = el("select");
      fillSelect(input, arg.choices);
    } else {
      // Never chosen for the participant: the list starts on "choose ...".
      input = el("select");
      const targets = current.handles[arg.name] || [];
      const what = arg.name === "item" ? "product" : arg.name;
      fillSelect(input, ["", ...targets.map((t) => t.handle)],
        ["choose a " + what + "...", ...targets.map((t) => "[" + t.handle + "] " + t.name
          + (t.price === undefined ? "" : " · " + money(t.price)))]);
      if (!targets.length) label.append(el("span", "(nothing of this kind in view)", "muted"));
    }
    input.dataset.arg = arg.name;
    input.dataset.kind = arg.kind;
    input.id = "arg-" + arg.name;
    label.appendChild(input);
    box.appendChild(label);
  }
}

function readAction() {
  const args = {};
  for (const input of $("args").querySelectorAll("[data-arg]")) {
    if (input.value === "") continue;
    args[input.dataset.arg] = input.dataset.kind === "angle" ? Number(input.value) : input.value;
  }
  return { name: $("tool").value, arguments: args };
}

function renderRating(state) {
  $("rating-label").textContent = state.assistant_label;
  $("outcome-bought").textContent = state.outcome.bought;
  $("outcome-reason").textContent = state.outcome.reason;
  $("transcript").replaceChildren(...dialogueLines(state.transcript, state.assistant_label));
  const box = $("questions");
  box.replaceChildren();
  for (const q of state.questions) {
    const field = el("fieldset", "", "question");
    field.append(el("legend", q.dimension), el("p", q.question, "muted"));
    for (let v = 1; v <= 5; v++) {
      const label = el("label", "", "inline");
      const radio = el("input");
      radio.type = "radio"; radio.name = q.dimension; radio.value = String(v); radio.required = true;
      label.append(radio, document.createTextNode(" " + v));
      field.appendChild(label);
    }
    box.appendChild(field);
  }
  showPage("rating");
}

async function guarded(fn) {
  const buttons = document.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  showError("");
  try { await fn(); } catch (e) { showError(e.message); }
  finally { buttons.forEach((b) => { b.disabled = false; }); }
}

$("join-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    const joined = await api("POST", "/api/participants", {
      age_group: $("age_group").value, shopping_frequency: $("shopping_frequency").value, note: $("note").value,
    });
    localStorage.setItem(TOKEN_KEY, joined.token);
    await render(await api("GET", "/api/state"));
  });
});

$("resume-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    localStorage.setItem(TOKEN_KEY, $("resume-input").value.trim());
    await render(await api("GET", "/api/state"));
  });
});

$("start").addEventListener("click", () => guarded(async () => render(await api("POST", "/api/start"))));

$("tool").addEventListener("change", () => { hideConfirm(); renderArgs(); });

async function sendTurn(action) {
  const utterance = $("utterance").value;
  const state = await api("POST", "/api/turn", {
    utterance, action, gave_up: $("gave-up").checked, silent: utterance.trim() === "",
  });
  $("utterance").value = "";
  $("gave-up").checked = false;
  await render(state);
}

function hideConfirm() { $("confirm").hidden = true; }

$("turn-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const action = readAction();
  if (action.name === "add_to_cart") {
    // Buying ends the conversation: name the product and ask first.
    const product = (current.handles.item || []).find((t) => t.handle === action.arguments.item);
    if (!product) { showError("please choose which product to put in your cart"); return; }
    showError("");
    $("confirm-product").textContent = product.name.replace(/ \(in your hands\)$/, "") + " (" + money(product.price) + ")";
    $("confirm").hidden = false;
    $("confirm-yes").focus();
    return;
  }
  guarded(async () => sendTurn(action));
});

$("confirm-yes").addEventListener("click", () => guarded(async () => { hideConfirm(); await sendTurn(readAction()); }));
$("confirm-no").addEventListener("click", hideConfirm);

$("rating-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guarded(async () => {
    const ratings = {};
    for (const q of current.questions) {
      const picked = document.querySelector("input[name='" + CSS.escape(q.dimension) + "']:checked");
      if (picked) ratings[q.dimension] = Number(picked.value);
    }
    await render(await api("POST", "/api/ratings", { ratings }));
  });
});

async function boot() {
  options = await api("GET", "/api/options");
  fillSelect($("age_group"), options.profile.age_group);
  fillSelect($("shopping_frequency"), options.profile.shopping_frequency);
  $("note").maxLength = options.max_note;
  if (token()) {
    try { await render(await api("GET", "/api/state")); return; } catch (e) { showError(e.message); }
  }
  $("whoami").hidden = true;
  showPage("join");
}

boot().catch((e) => showError(e.message));
