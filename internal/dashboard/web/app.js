// pm dashboard: draws GET /api/state, then follows GET /api/events from the
// snapshot's cursor. Agent text is only ever put in the page as text
// (textContent through el()), never parsed as HTML.
"use strict";

const MAX_LOG = 1000;   // lines kept in the message log
const MAX_TREE = 500;   // task rows drawn before "show more"

let state = null;       // the last snapshot
let cursor = "";        // the cursor after the last event applied
let socket = null;
let refreshTimer = null;
let treeLimit = MAX_TREE;
const drafts = new Map(); // what the human is typing, kept across re-renders

// draftInput is a text box whose content and focus survive re-rendering.
function draftInput(key, placeholder) {
  const input = el("input", { placeholder, maxlength: "16000", required: "", "data-draft": key });
  input.value = drafts.get(key) || "";
  input.addEventListener("input", () => drafts.set(key, input.value));
  return input;
}

function clearDraft(input) { drafts.delete(input.dataset.draft); input.value = ""; }

// el builds an element; strings become text nodes, so nothing is HTML.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function $(id) { return document.getElementById(id); }

function showError(msg) {
  const b = $("error");
  b.textContent = msg;
  b.hidden = !msg;
}

async function post(path, body) {
  const r = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-PM-CSRF": "1" },
    body: JSON.stringify(body),
  });
  const out = await r.json().catch(() => ({}));
  if (!r.ok) {
    showError((out.error || r.statusText) + (out.try ? " — Try: " + out.try : ""));
    throw new Error(out.error);
  }
  showError("");
  return out;
}

async function loadState(withLog) {
  const r = await fetch("/api/state?log=" + (withLog ? 300 : 0), { credentials: "same-origin" });
  if (r.status === 401) { $("auth").hidden = false; return null; }
  if (!r.ok) { showError("state: " + r.status); return null; }
  return r.json();
}

// refresh re-reads the snapshot (structure changed) without its log; many
// events in a burst cost one read.
function scheduleRefresh() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = null;
    const s = await loadState(false);
    if (s) { state = s; renderAll(); }
  }, 250);
}

async function start() {
  const s = await loadState(true);
  if (!s) return;
  state = s;
  cursor = s.cursor;
  renderAll();
  $("log").replaceChildren();
  for (const ev of s.log) appendLog(ev);
  connect();
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(proto + "//" + location.host + "/api/events?cursor=" + encodeURIComponent(cursor));
  socket.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn on"; };
  socket.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.type === "event") {
      cursor = msg.cursor;
      apply(msg.event);
    } else if (msg.type === "resnapshot") {
      socket.onclose = null;
      socket.close();
      start();
    }
  };
  socket.onclose = () => {
    $("conn").textContent = "reconnecting…"; $("conn").className = "conn off";
    setTimeout(connect, 1000); // resumes at cursor: nothing missed, nothing twice
  };
}

// apply folds one bus event into the page.
function apply(ev) {
  appendLog(ev);
  if (ev.kind === "message.posted") {
    const room = document.querySelector('.room[data-phase="' + CSS.escape(ev.phase_id || "") + '"]');
    if (room) {
      const box = room.querySelector(".msgs");
      box.append(messageLine(ev.actor, "", ev.text));
      box.scrollTop = box.scrollHeight;
      if (ev.data && ev.data.n) room.querySelector(".count").textContent = ev.data.n + "/" + ev.data.limit;
    }
  }
  if (ev.kind === "request.asked") notify(ev);
  if (ev.kind === "reset") { start(); return; }
  if (/^(task|phase|agent|request|capability|message|po|git)\./.test(ev.kind) && ev.kind !== "agent.think") scheduleRefresh();
}

// ---- message log: the bus as from → to: message

function logTarget(ev) {
  if (ev.kind === "request.asked") return "human";
  return ev.agent || ev.phase_id || ev.task_id || "";
}

function appendLog(ev) {
  const log = $("log");
  const to = logTarget(ev);
  const tool = ev.kind === "tool.call" || ev.kind === "tool.result" || ev.kind === "agent.think";
  const li = el("li", { class: tool ? "tool" : "" },
    el("span", { class: "kind" }, (ev.ts || "").slice(11, 19) + " " + ev.kind + " "),
    el("span", { class: "who" }, ev.actor || ""),
    to ? " → " + to : "",
    ev.text ? ": " + ev.text : "");
  log.append(li);
  while (log.childElementCount > MAX_LOG) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

// ---- rendering

function renderAll() {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.draft : undefined;
  renderParts();
  if (focused) {
    const again = document.querySelector('[data-draft="' + CSS.escape(focused) + '"]');
    if (again) { again.focus(); again.setSelectionRange(again.value.length, again.value.length); }
  }
}

function renderParts() {
  const c = state.counts || {};
  $("counts").textContent = Object.entries(c).map(([k, v]) => v + " " + k).join(" · ") || "no tasks";
  renderAttention();
  renderCapabilities();
  renderRooms();
  renderTasks();
  renderUsage();
}

function renderAttention() {
  const box = $("attention");
  const items = [];
  for (const rq of state.requests) {
    const input = draftInput("answer:" + rq.id, "Your answer");
    const form = el("form", { class: "answer" }, input, el("button", { type: "submit" }, "Answer"));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      await post("/api/answer", { id: rq.id, text: input.value });
      clearDraft(input);
      scheduleRefresh();
    });
    items.push(el("div", { class: "card request", "data-request": rq.id },
      el("div", {}, el("span", { class: "who" }, rq.from), " asks" + (rq.task_id ? " (" + rq.task_id + ")" : "") + ": ", el("span", { class: "question" }, rq.question)),
      form));
  }
  for (const a of state.agents) {
    if (a.status === "dead" || a.status === "failed") {
      items.push(el("div", { class: "card bad" }, el("span", { class: "who" }, a.name),
        " " + a.status + (a.task_id ? " on " + a.task_id : "") + (a.reason ? ": " : ""), a.reason || ""));
    }
  }
  for (const t of state.tasks) {
    if (t.status === "blocked") {
      items.push(el("div", { class: "card" }, el("span", { class: "id" }, t.id), " waits for " + (t.blocked_by || []).join(", ")));
    }
  }
  if (items.length === 0) items.push(el("p", { class: "calm" }, "Nothing needs you now."));
  box.replaceChildren(...items);
}

function renderCapabilities() {
  const chips = state.prompts.map((p) => el("span", { class: "chip " + p.state, title: p.description + "\ncapabilities: " + p.capabilities.join(", ") },
    p.name + " · " + p.state));
  const prims = new Set();
  for (const p of state.prompts) for (const c of p.capabilities) if (!state.prompts.some((q) => q.name === c)) prims.add(c);
  for (const c of [...prims].sort()) chips.push(el("span", { class: "chip primitive", title: "primitive" }, c));
  $("capabilities").replaceChildren(...chips);
}

function messageLine(who, role, text) {
  return el("div", { class: "msg" }, el("span", { class: "who" }, who), role ? el("span", { class: "role" }, " (" + role + ")") : null, ": ", text);
}

function renderRooms() {
  const active = state.rooms.filter((r) => r.phase.status === "active");
  const closed = state.rooms.filter((r) => r.phase.status !== "active");
  const out = active.map(roomView);
  if (closed.length) {
    out.push(el("details", {}, el("summary", {}, closed.length + " closed phase(s)"),
      ...closed.map((r) => el("div", { class: "meta" }, r.phase.id + " " + r.phase.name + " — " + r.count + "/" + r.phase.message_limit + " " + (r.phase.close_reason || "")))));
  }
  if (out.length === 0) out.push(el("p", { class: "calm" }, "No phase is open."));
  $("rooms").replaceChildren(...out);
}

function roomView(r) {
  const ph = r.phase;
  const msgs = el("div", { class: "msgs" }, ...(r.messages || []).map((m) => messageLine(m.author, m.role, m.content)));
  const input = draftInput("say:" + ph.id, "Say something as the human");
  const say = el("form", { class: "say" }, input, el("button", { type: "submit" }, "Say"));
  say.addEventListener("submit", async (e) => {
    e.preventDefault();
    await post("/api/say", { phase: ph.id, message: input.value });
    clearDraft(input);
  });
  const extend = el("button", { type: "button", onclick: () => post("/api/extend-phase", { task: ph.task_id, n: 5 }) }, "+5 messages");
  const end = el("button", { type: "button", onclick: () => post("/api/end-phase", { task: ph.task_id }) }, "End phase");
  return el("div", { class: "room", "data-phase": ph.id },
    el("div", {}, el("strong", {}, ph.name), " ", el("span", { class: "meta count" }, r.count + "/" + ph.message_limit), " ", extend, " ", end),
    el("div", { class: "meta info" }, ph.id + " on " + ph.task_id + " · roles: " + (ph.roles || []).join(", ") + (ph.rules ? " · rules: " : ""), ph.rules || ""),
    msgs, say);
}

function renderTasks() {
  const byID = new Map(state.tasks.map((t) => [t.id, t]));
  const roots = state.tasks.filter((t) => !t.parent_id || !byID.has(t.parent_id));
  let drawn = 0;
  const node = (t) => {
    if (drawn >= treeLimit) return null;
    drawn++;
    const kill = el("button", { type: "button", onclick: () => post("/api/kill", { task: t.id }) }, "Kill");
    const restart = el("button", { type: "button", onclick: () => post("/api/kill", { task: t.id, restart: true }) }, "Restart");
    const live = t.status === "active" || t.status === "blocked";
    const row = el("div", { class: "task", "data-task": t.id },
      el("span", { class: "id" }, t.id), el("span", { class: "status " + t.status }, t.status),
      el("span", { class: "desc" }, t.description),
      (t.blocked_by || []).length ? el("span", { class: "edge" }, "⟵ " + t.blocked_by.join(", ")) : null,
      live ? kill : null, live ? restart : null);
    const kids = (t.children || []).map((id) => byID.get(id)).filter(Boolean).map(node).filter(Boolean);
    return el("li", {}, row, kids.length ? el("ul", {}, ...kids) : null);
  };
  const items = roots.map(node).filter(Boolean);
  const out = [el("ul", { class: "tree" }, ...items)];
  if (drawn >= treeLimit) out.push(el("button", { type: "button", onclick: () => { treeLimit += MAX_TREE; renderTasks(); } }, "Show more"));
  if (state.total > state.tasks.length) out.push(el("p", { class: "calm" }, (state.total - state.tasks.length) + " finished task(s) not shown"));
  $("tasks").replaceChildren(...out);
}

function renderUsage() {
  const rows = state.agents.map((a) => el("tr", {},
    el("td", {}, a.name), el("td", {}, a.task_id || ""), el("td", {}, a.status + (a.activity ? " (" + a.activity + ")" : "")),
    el("td", {}, a.usage.turns), el("td", {}, a.usage.tool_calls), el("td", {}, a.usage.tokens), el("td", {}, a.restarts)));
  $("usage").tBodies[0].replaceChildren(...rows);
}

// ---- notifications (opt-in)

function notify(ev) {
  if (window.Notification && Notification.permission === "granted") {
    new Notification("pm: " + (ev.actor || "an agent") + " asks", { body: ev.text || "" });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("notify").addEventListener("click", () => window.Notification && Notification.requestPermission());
  $("new-task").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("new-task-text");
    await post("/api/task", { description: input.value });
    input.value = "";
  });
  start();
});
