// pm dashboard: reads GET /api/state once, then follows GET /api/events from
// the snapshot's cursor and folds each event into the page's state (apply):
// it re-reads the snapshot only when the server says the page fell behind
// (resnapshot) or the state directory was reset. Agent text is only ever put
// in the page as text (textContent through el()), never parsed as HTML.
"use strict";

const MAX_LOG = 1000;     // lines kept in the message log
const MAX_TREE = 500;     // task rows drawn before "show more"
const MAX_ROOM = 200;     // messages kept per room
const MAX_STREAM = 4000;  // characters of streamed model text kept per agent
const MAX_TEXT = 4000;    // characters of one message or task description drawn
const MAX_BARS = 50;      // cost bars drawn per list (the costliest first)

let state = null;         // the snapshot, kept current by apply()
let cursor = "";          // the cursor after the last event applied
let snapCursor = "";      // the snapshot's cursor: the timeline's history is read before it
let socket = null;
let treeLimit = MAX_TREE;
let renderQueued = false;
const dirty = new Set();  // sections to draw again
const drafts = new Map(); // what the human is typing, kept across re-renders
const streams = new Map(); // agent → {text, done}: its model output as it streams
let detail = null;        // the open task's GET /api/task answer
let detailTimer = null;

// ---- small helpers

// el builds an element; strings become text nodes, so nothing is HTML.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function $(id) { return document.getElementById(id); }

// draftInput is a text box whose content and focus survive re-rendering.
function draftInput(key, placeholder) {
  const input = el("input", { placeholder, maxlength: "16000", required: "", "data-draft": key });
  input.value = drafts.get(key) || "";
  input.addEventListener("input", () => drafts.set(key, input.value));
  return input;
}

function clearDraft(input) { drafts.delete(input.dataset.draft); input.value = ""; }

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

async function getJSON(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  if (r.status === 401) { $("auth").hidden = false; return null; }
  const out = await r.json().catch(() => ({}));
  if (!r.ok) { showError((out.error || r.statusText) + (out.try ? " — Try: " + out.try : "")); return null; }
  return out;
}

// ---- the state: one snapshot, then events

async function start() {
  const t0 = performance.now();
  const s = await getJSON("/api/state?log=300");
  performance.measure("pm:snapshot", { start: t0 });
  if (!s) return;
  state = {
    tasks: new Map(s.tasks.map((t) => [t.id, t])),
    health: s.health || {},
    counts: s.counts || {},
    total: s.total,
    agents: new Map(s.agents.map((a) => [a.name, a])),
    requests: new Map(s.requests.map((r) => [r.id, r])),
    prompts: s.prompts,
    rooms: new Map(s.rooms.map((r) => [r.phase.id, { ...r, messages: r.messages || [], typing: new Map((r.typing || []).map((x) => [x.name, x.since || ""])) }])),
    budgets: s.budgets,
    windows: s.windows || [],
    costs: { tasks: new Map(Object.entries((s.costs && s.costs.tasks) || {})), agents: new Map(Object.entries((s.costs && s.costs.agents) || {})) },
    budgetStops: [],
  };
  cursor = s.cursor;
  snapCursor = s.cursor;
  streams.clear();
  $("log").replaceChildren();
  for (const entry of s.log) {
    appendLog(entry.event, entry.line, true);
    if (entry.event.kind === "agent.budget") pushBudgetStop(entry.event);
  }
  historyOf = "";
  if (timelineFilter) taskHistory(timelineFilter); // the chosen task's history before the new cursor
  for (const k of ["attention", "capabilities", "rooms", "tasks", "usage", "costs"]) dirty.add(k);
  render();
  if (detail) openTask(detail.task.id);
  else route(); // a task's URL opens it
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
      appendLog(msg.event, msg.line);
      if (msg.event.kind === "reset") { resnapshot(); return; }
      apply(msg.event, msg.changes);
      applyHealth(msg.event.task_id, msg.health);
      scheduleRender();
    } else if (msg.type === "resnapshot") {
      resnapshot();
    }
  };
  socket.onclose = () => {
    $("conn").textContent = "reconnecting…"; $("conn").className = "conn off";
    setTimeout(connect, 1000); // resumes at cursor: nothing missed, nothing twice
  };
}

// resnapshot drops the stream and starts again from a new snapshot (the
// page fell too far behind, or the state directory was reset).
function resnapshot() {
  socket.onclose = null;
  socket.close();
  start();
}

const num = (v) => (typeof v === "number" ? v : 0);

function countStatus(from, to) {
  if (from) state.counts[from] = Math.max(0, num(state.counts[from]) - 1);
  if (to) state.counts[to] = num(state.counts[to]) + 1;
}

function setTaskStatus(id, status) {
  const t = state.tasks.get(id);
  if (!t || t.status === status) return;
  countStatus(t.status, status);
  t.status = status;
  state.health[id] = { state: status === "active" ? "working" : status };
}

// stallOwner marks a live task stalled when its owner stops without it.
function stallOwner(a, reason) {
  const t = a && state.tasks.get(a.task_id);
  if (!t || t.owner !== a.name || (t.status !== "active" && t.status !== "blocked")) return;
  state.health[t.id] = { state: "stalled", reason: reason || ("owner @" + a.name + " " + a.status) };
}

function promptState(name, st) {
  const p = state.prompts.find((q) => q.name === name);
  if (p && p.state !== st) { p.state = st; dirty.add("capabilities"); }
}

// applyHealth takes the task's health the server sent with an event (it
// works out what several records say: starting → working, waiting-children,
// stalled), over what apply guessed from the event alone.
function applyHealth(id, h) {
  if (!h || !id || !state.tasks.has(id)) return;
  const was = state.health[id];
  const still = (x) => !!x && (x.state === "idle" || x.state === "stuck");
  if (still(was) || still(h)) dirty.add("rooms"); // its room's pulse says idle or stuck
  state.health[id] = h;
  dirty.add("tasks").add("attention");
}

// apply folds one bus event into the state and marks what to draw again.
// changes: the server says the event may change what a view shows
// (ops.ChangesView); only then does an open task detail read itself again.
function apply(ev, changes) {
  const d = ev.data || {};
  const agent = state.agents.get(ev.agent);
  if (detail && ev.task_id === detail.task.id && changes) scheduleDetail();
  switch (ev.kind) {
    case "task.created": {
      if (state.tasks.has(ev.task_id)) break; // already in the snapshot
      const t = { id: ev.task_id, description: ev.text, owner: ev.agent, parent_id: d.parent_id || "",
        blocked_by: d.blocked_by || [], status: d.status, runtime: d.runtime, depth: d.depth, created_at: ev.ts, children: [] };
      state.tasks.set(t.id, t);
      state.health[t.id] = { state: t.status === "blocked" ? "blocked" : "starting" };
      const parent = state.tasks.get(t.parent_id);
      if (parent) parent.children = [...(parent.children || []), t.id];
      countStatus("", t.status);
      state.total++;
      dirty.add("tasks").add("attention");
      break;
    }
    case "task.unblocked": case "task.restarted":
      setTaskStatus(ev.task_id, "active"); dirty.add("tasks").add("attention"); break;
    case "task.done": case "task.killed":
      setTaskStatus(ev.task_id, ev.kind === "task.done" ? "done" : "killed");
      for (const r of state.rooms.values()) if (r.phase.task_id === ev.task_id) state.rooms.delete(r.phase.id);
      dirty.add("tasks").add("attention").add("rooms");
      break;
    case "git.commit": {
      const t = state.tasks.get(ev.task_id);
      if (t) { t.commit = ev.text; dirty.add("tasks"); }
      break;
    }
    case "phase.opened":
      if (!state.rooms.has(ev.phase_id)) {
        state.rooms.set(ev.phase_id, { phase: { id: ev.phase_id, task_id: ev.task_id, name: ev.text, message_limit: d.limit,
          roles: d.roles || [], rules: d.rules || "", status: "active", created_at: ev.ts }, count: 0, messages: [], typing: new Map(), last_activity: ev.ts });
      }
      dirty.add("rooms");
      break;
    case "phase.extended": {
      const r = state.rooms.get(ev.phase_id);
      if (r) { r.phase.message_limit = d.limit; r.last_activity = ev.ts; dirty.add("rooms"); }
      break;
    }
    case "phase.closed": {
      const r = state.rooms.get(ev.phase_id);
      if (r) { r.phase.status = "closed"; r.phase.close_reason = ev.text; r.count = num(d.messages); r.messages = []; r.typing.clear(); r.last_activity = ev.ts; dirty.add("rooms"); }
      break;
    }
    case "message.posted": postMessage(ev, d); break;
    case "agent.created":
      if (!agent) {
        state.agents.set(ev.agent, { name: ev.agent, prompt: d.prompt, role: d.role || "", task_id: ev.task_id || "",
          phase_id: ev.phase_id || "", runtime: d.runtime, status: "pending", restarts: 0,
          usage: { turns: 0, tool_calls: 0, tokens: 0 }, created_at: ev.ts });
        dirty.add("usage");
      }
      break;
    case "agent.started": case "agent.respawned":
      if (agent) {
        agent.status = "running"; agent.restarts = num(d.restarts); agent.reason = "";
        if (d.pid) agent.pid = d.pid;
        if (!agent.started_at) agent.started_at = ev.ts;
        const t = state.tasks.get(agent.task_id);
        if (t && t.owner === agent.name && t.status === "active") state.health[t.id] = { state: "working" };
        dirty.add("usage").add("attention");
      }
      break;
    case "agent.exited": case "agent.killed": case "agent.failed":
      if (agent) {
        agent.status = ev.kind === "agent.exited" ? "exited" : ev.kind === "agent.killed" ? "killed" : "failed";
        agent.reason = ev.text || ""; agent.ended_at = ev.ts;
        if (ev.kind !== "agent.killed") stallOwner(agent, ev.text);
        setTyping(agent, false, ev.ts);
        if (!agent.task_id) promptState(agent.prompt, agent.status === "exited" ? "idle" : agent.status);
        dirty.add("usage").add("attention");
      }
      break;
    case "agent.budget":
      pushBudgetStop(ev); dirty.add("attention"); break;
    case "agent.turn":
      if (agent) {
        agent.usage = withDollars({ turns: num(d.turns), tool_calls: num(d.tool_calls), tokens: num(d.tokens) }, agent.usage, d);
        dirty.add("usage");
      }
      addCost(ev.agent, ev.task_id || (agent && agent.task_id) || "", d.usd);
      endStream(ev.agent);
      break;
    case "agent.output": streamOutput(ev, d); break;
    case "agent.activity":
      if (agent) {
        agent.activity = ev.text; agent.active_at = ev.ts;
        if (!agent.task_id) promptState(agent.prompt, ev.text); // a resident: its capability chip
        setTyping(agent, agent.status === "running" && ev.text === "working", ev.ts);
        dirty.add("usage");
      }
      detailActivity(ev.agent, ev.text);
      break;
    case "request.asked":
      state.requests.set(d.request, { id: d.request, from: ev.actor, task_id: ev.task_id || "", question: ev.text, status: "pending", created_at: ev.ts, agent: d.about || "" });
      if (state.health[ev.task_id]) state.health[ev.task_id] = { state: "waiting-human", requests: [d.request] };
      notify(ev);
      dirty.add("attention");
      break;
    case "request.answered": case "request.moot":
      state.requests.delete(d.request);
      if (state.health[ev.task_id] && state.health[ev.task_id].state === "waiting-human") state.health[ev.task_id] = { state: "working" };
      dirty.add("attention");
      break;
    case "capability.created":
      if (!state.prompts.some((p) => p.name === d.name)) {
        state.prompts.push({ name: d.name, description: d.description || "", capabilities: d.capabilities || [], source: d.path || "", state: "idle", fresh: true });
        dirty.add("capabilities");
      }
      break;
    case "po.request": promptState(ev.agent, "working"); break;
    case "po.reply": promptState(ev.actor, "idle"); break;
  }
}

// postMessage adds a message to its room in place (no full redraw), so a
// busy room does not redraw the page per message.
function postMessage(ev, d) {
  const r = state.rooms.get(ev.phase_id);
  if (!r) return;
  if (r.messages.some((m) => m.id && m.id === ev.msg_id)) return; // already in the snapshot
  const a = state.agents.get(ev.actor);
  const m = { id: ev.msg_id, author: ev.actor, role: a ? a.role : "", content: ev.text, timestamp: ev.ts };
  r.messages.push(m);
  r.last_activity = ev.ts;
  if (r.messages.length > MAX_ROOM) r.messages.shift();
  if (d.n) r.count = d.n;
  if (d.limit) r.phase.message_limit = d.limit;
  endStream(ev.actor, true);
  const room = document.querySelector('.room[data-phase="' + CSS.escape(ev.phase_id) + '"]');
  const box = room && room.querySelector(".msgs");
  if (!box) { dirty.add("rooms"); return; } // not drawn, or folded
  box.append(messageLine(m.author, m.role, m.content, m.timestamp));
  while (box.childElementCount > MAX_ROOM) box.firstElementChild.remove();
  box.scrollTop = box.scrollHeight;
  room.querySelector(".count").replaceWith(roomCount(r));
  room.querySelector(".pulse").replaceWith(roomPulse(r));
}

// setTyping: an agent's turn is in flight in its room (running, activity
// "working": the rule of the server's RoomView.Typing), or no longer.
// Drawn in place: activity changes are frequent.
function setTyping(a, on, ts) {
  const r = a.phase_id && state.rooms.get(a.phase_id);
  if (!r || r.phase.status !== "active" || r.typing.has(a.name) === on) return;
  if (on) r.typing.set(a.name, ts || ""); else r.typing.delete(a.name);
  const pulse = document.querySelector('.room[data-phase="' + CSS.escape(r.phase.id) + '"] .pulse');
  if (pulse) pulse.replaceWith(roomPulse(r));
}

// addCost adds one model call's dollars (agent.turn's usd; null: unknown,
// never $0) to its agent's and its task's cost lines, as the ledger sums them.
function addCost(name, taskID, usd) {
  const add = (m, key, maxUSD) => {
    const l = m.get(key) || { name: m === state.costs.agents ? key : "", task: taskID, sum: { entries: 0, usd: 0, unknown: 0 }, max_usd: maxUSD };
    l.sum = { ...l.sum, entries: num(l.sum.entries) + 1, usd: num(l.sum.usd) + (usd == null ? 0 : num(usd)), unknown: num(l.sum.unknown) + (usd == null ? 1 : 0) };
    l.cost = sumText(l.sum);
    m.set(key, l);
  };
  const b = state.budgets || {};
  if (name) add(state.costs.agents, name, num(b.agent && b.agent.max_usd));
  if (taskID) {
    add(state.costs.tasks, taskID, num(b.task && b.task.max_usd));
    const bar = document.querySelector('[data-task="' + CSS.escape(taskID) + '"] .cost');
    if (bar) bar.replaceWith(taskCostBar(taskID));
  }
  dirty.add("costs");
}

// ---- streamed model output

function streamOutput(ev, d) {
  let s = streams.get(ev.agent);
  if (!s || s.done) { s = { text: "", done: false }; streams.set(ev.agent, s); }
  if (d.retry) s.text = "";
  s.text = (s.text + (ev.text || "")).slice(-MAX_STREAM);
  drawStream(ev.agent);
}

// endStream: a response ended (the text stays until the next one), or the
// agent posted (its message replaces the stream).
function endStream(name, clear) {
  const s = streams.get(name);
  if (!s) return;
  s.done = true;
  if (clear) streams.delete(name);
  drawStream(name);
}

function streamView(name) {
  const s = streams.get(name);
  if (!s || !s.text) return null;
  return el("div", { class: "stream" + (s.done ? " done" : ""), "data-agent": name },
    el("span", { class: "who" }, name), s.done ? " (last output): " : " is writing: ", el("span", { class: "text" }, s.text));
}

// drawStream puts an agent's stream where it belongs: its room, or the open
// task's detail for its owner.
function drawStream(name) {
  const a = state.agents.get(name);
  for (const old of document.querySelectorAll('.stream[data-agent="' + CSS.escape(name) + '"]')) old.remove();
  const v = streamView(name);
  if (!v || !a) return;
  const room = a.phase_id && document.querySelector('.room[data-phase="' + CSS.escape(a.phase_id) + '"] .streams');
  if (room) room.append(v);
  const owner = detail && detail.task.owner === name && document.querySelector("#detail .streams");
  if (owner) owner.append(streamView(name));
}

// ---- message log: the bus as from → to: message, calls nested under the
// call that caused them (the server computes each line with internal/msglog)

// appendLog adds one event to the timeline; snap marks one of the
// snapshot's log (before its cursor), which a task's fuller history from
// GET /api/timeline replaces when the filter chooses that task.
function appendLog(ev, line, snap) {
  const li = logItem(ev, line);
  if (!li) return;
  if (snap) li.dataset.snap = "1";
  li.hidden = !shown(li);
  const log = $("log");
  log.append(li);
  while (log.childElementCount > MAX_LOG) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
}

function logItem(ev, line) {
  const time = (ev.ts || "").slice(11, 19) + " ";
  let li;
  if (line) {
    li = el("li", { class: "line" + (line.primitive ? " primitive" : ""), "data-depth": line.depth },
      el("span", { class: "kind" }, time),
      el("span", { class: "who" }, line.from), line.to ? " → " : "", line.to ? el("span", { class: "who" }, line.to) : null,
      line.text ? ": " + clip(line.text, MAX_TEXT) : "");
    li.style.paddingLeft = Math.min(line.depth, 8) * 1.5 + "em"; // CSSOM: the CSP forbids style attributes
  } else {
    if (ev.kind === "agent.output" || ev.kind === "agent.turn" || ev.kind === "agent.activity") return null; // shown in rooms, usage and the capability bar
    const to = ev.agent || ev.phase_id || ev.task_id || "";
    li = el("li", { class: "other" }, el("span", { class: "kind" }, time + ev.kind + " "),
      el("span", { class: "who" }, ev.actor || ""), to ? " → " + to : "", ev.text ? ": " + clip(ev.text, MAX_TEXT) : "");
  }
  if (ev.task_id) li.dataset.task = ev.task_id;
  return li;
}

// The timeline's task filter: the events the page keeps (the snapshot's
// log, then every event live) of one task; "" shows all.
let timelineFilter = "";

let historyOf = "";       // the task whose history (GET /api/timeline) the list holds

// shown: which of the timeline's items the filter shows. All tasks: the
// snapshot's log and the live events. One task: its live events, after its
// history once that is read (until then, its few in the snapshot's log).
function shown(li) {
  if (!timelineFilter) return !li.dataset.fetched;
  if (li.dataset.task !== timelineFilter) return false;
  return historyOf === timelineFilter ? !li.dataset.snap : !li.dataset.fetched;
}

function refilter() {
  for (const li of $("log").children) li.hidden = !shown(li);
  $("log").scrollTop = $("log").scrollHeight;
}

async function filterTimeline(id) {
  timelineFilter = id;
  refilter();
  if (id && historyOf !== id) await taskHistory(id);
}

// taskHistory reads a task's last events before the snapshot's cursor
// (GET /api/timeline) into the list, at its top (they are older than
// every live event, and shown only while that task is chosen, in place of
// its few in the snapshot's log): with the live events the page followed
// from that cursor, each of its events shows once, in order.
async function taskHistory(id) {
  const at = snapCursor;
  const h = await getJSON("/api/timeline?task=" + encodeURIComponent(id) + "&before=" + encodeURIComponent(at) + "&n=300");
  if (!h || at !== snapCursor || timelineFilter !== id) return; // a resnapshot or another choice since
  const log = $("log");
  for (const li of [...log.querySelectorAll("li[data-fetched]")]) li.remove();
  const items = h.log.map((e) => logItem(e.event, e.line)).filter(Boolean);
  for (const li of items) li.dataset.fetched = "1";
  log.prepend(...items);
  historyOf = id;
  while (log.childElementCount > MAX_LOG) log.firstElementChild.remove();
  refilter();
}

// timelineTasks keeps the filter's choices to the tasks the page knows,
// redrawn only when that set changes.
let timelineKnown = "";
function timelineTasks() {
  const ids = [...state.tasks.keys()];
  const key = ids.join(",");
  if (key === timelineKnown) return;
  timelineKnown = key;
  const sel = $("timeline-task");
  sel.replaceChildren(el("option", { value: "" }, "all tasks"),
    ...ids.slice(-MAX_TREE).reverse().map((id) => el("option", { value: id }, id + " " + clip(state.tasks.get(id).description, 40))));
  if (timelineFilter && !state.tasks.has(timelineFilter)) filterTimeline("");
  sel.value = timelineFilter;
}

// Every shown age ([data-ago]) counts on between events, so a still room's
// idle time grows on screen.
setInterval(() => {
  for (const e of document.querySelectorAll("[data-ago]")) e.textContent = ago(e.dataset.ago);
}, 5000);

// ---- rendering: sections marked dirty are drawn again, once per frame

function scheduleRender() {
  if (renderQueued || dirty.size === 0) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

function render() {
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.draft : undefined;
  const c = state.counts || {};
  $("counts").textContent = Object.entries(c).filter(([, v]) => v > 0).map(([k, v]) => v + " " + k).join(" · ") || "no tasks";
  const parts = { attention: renderAttention, capabilities: renderCapabilities, rooms: renderRooms, tasks: renderTasks, usage: renderUsage, costs: renderCosts };
  // Each section's drawing is a performance measure ("pm:tasks"...): the
  // browser's profiler and the measure test read them.
  for (const k of dirty) { const t0 = performance.now(); parts[k](); performance.measure("pm:" + k, { start: t0 }); }
  dirty.clear();
  if (focused) {
    const again = document.querySelector('[data-draft="' + CSS.escape(focused) + '"]');
    if (again && again !== document.activeElement) { again.focus(); again.setSelectionRange(again.value.length, again.value.length); }
  }
}

// confirmKill asks before a kill (or a restart, which kills the running
// owner): both end processes and cannot be undone.
function confirmKill(id, restart) {
  const what = restart ? "Restart " + id + "? Its agents are killed and a fresh owner starts." : "Kill " + id + " and its subtasks? Their agents are ended.";
  if (!window.confirm(what)) return Promise.resolve(null);
  return post("/api/kill", restart ? { task: id, restart: true } : { task: id });
}

// A person dismisses a failed agent's card for this browser: the key names
// the run (its end), so a later failure of the same agent shows again.
const dismissKey = (a) => "pm.dismissed." + a.name + "." + (a.ended_at || "");
function dismissed(a) { try { return localStorage.getItem(dismissKey(a)) === "1"; } catch (e) { return false; } }
function dismiss(a) { try { localStorage.setItem(dismissKey(a), "1"); } catch (e) { /* private mode: for this render only */ } dirty.add("attention"); render(); }

const liveTask = (id) => { const t = state.tasks.get(id); return !!t && (t.status === "active" || t.status === "blocked"); };

function renderAttention() {
  const items = [];
  const about = new Set();
  for (const rq of state.requests.values()) {
    const input = draftInput("answer:" + rq.id, rq.agent ? "Your words to @" + rq.agent + " (it resumes with them)" : "Your answer");
    const form = el("form", { class: "answer" }, input, el("button", { type: "submit" }, rq.agent ? "Resume" : "Answer"));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      await post("/api/answer", { id: rq.id, text: input.value });
      clearDraft(input);
    });
    // A request about an owner pm gave up on offers what it is about.
    let acts = null;
    if (rq.agent && rq.task_id && liveTask(rq.task_id)) {
      about.add(rq.agent);
      acts = el("div", { class: "acts" },
        el("button", { type: "button", "data-act": "try-again", onclick: () => post("/api/answer", { id: rq.id, text: "try again" }) }, "Try again"),
        el("button", { type: "button", "data-act": "restart", onclick: () => confirmKill(rq.task_id, true) }, "Restart"),
        el("button", { type: "button", "data-act": "kill", onclick: () => confirmKill(rq.task_id, false) }, "Kill"));
    }
    items.push(el("div", { class: "card request", "data-request": rq.id },
      el("div", {}, el("span", { class: "who" }, rq.from), " asks" + (rq.task_id ? " (" + rq.task_id + ")" : "") + ": ", el("span", { class: "question" }, clip(rq.question, MAX_TEXT))),
      form, acts));
  }
  for (const [id, h] of Object.entries(state.health)) {
    // stalled: nobody works on it; idle, stuck: a room nobody moves (derived
    // by the server from the last activity of the room and its agents).
    if ((h.state === "stalled" || h.state === "idle" || h.state === "stuck") && state.tasks.has(id)) {
      items.push(el("div", { class: "card bad", "data-stalled": id }, taskLink(id), " is " + h.state + ": ", clip(h.reason, MAX_TEXT), h.next ? el("div", { class: "meta" }, "Try: " + h.next) : null));
    }
  }
  for (const a of state.agents.values()) {
    // No card for an agent whose task is over (killed, done) or whose
    // request already says it, nor one the person dismissed.
    if ((a.status === "dead" || a.status === "failed") && (!a.task_id || liveTask(a.task_id)) && !about.has(a.name) && !dismissed(a)) {
      items.push(el("div", { class: "card bad", "data-failed": a.name }, el("span", { class: "who" }, a.name),
        " " + a.status + (a.task_id ? " on " + a.task_id : "") + (a.reason ? ": " : ""), clip(a.reason, MAX_TEXT),
        el("button", { type: "button", class: "dismiss", "data-act": "dismiss", onclick: () => dismiss(a) }, "Dismiss")));
    }
  }
  for (const ev of state.budgetStops) {
    items.push(el("div", { class: "card bad budget" }, "budget stop: ", clip(ev.text, MAX_TEXT)));
  }
  if (items.length === 0) items.push(el("p", { class: "calm" }, "Nothing needs you now."));
  $("attention").replaceChildren(...items);
}

let showPrimitives = false; // the capability bar's primitives, unfolded

function renderCapabilities() {
  const chips = state.prompts.map((p) => {
    const resident = state.agents.get(p.name);
    const stop = resident && !resident.task_id && resident.status === "running"
      ? el("button", { type: "button", class: "stop", title: "stop the resident " + p.name, onclick: () => post("/api/stop", { name: p.name }) }, "stop")
      : null;
    return el("span", { class: "chip " + p.state + (p.fresh ? " fresh" : ""), "data-prompt": p.name,
      title: p.description + "\ncapabilities: " + p.capabilities.join(", ") }, p.name + " · " + p.state, stop);
  });
  const prims = new Set();
  for (const p of state.prompts) for (const c of p.capabilities) if (!state.prompts.some((q) => q.name === c)) prims.add(c);
  // The primitives are folded into one chip until asked for: the bar stays
  // one line (it scrolls sideways inside itself on a phone).
  if (prims.size) {
    chips.push(el("button", { type: "button", class: "chip prims", "aria-expanded": String(showPrimitives), title: "the primitives the prompt objects use",
      onclick: () => { showPrimitives = !showPrimitives; dirty.add("capabilities"); scheduleRender(); } },
    (showPrimitives ? "− " : "+ ") + prims.size + " primitives"));
    if (showPrimitives) for (const c of [...prims].sort()) chips.push(el("span", { class: "chip primitive", title: "primitive" }, c));
  }
  $("capabilities").replaceChildren(...chips);
}

// clip bounds a text an agent wrote before it is drawn (as text).
function clip(text, n) {
  const t = String(text || "");
  return t.length > n ? t.slice(0, n) + "… (" + (t.length - n) + " more characters)" : t;
}

// messageLine is one message of a conversation: author, role, time and
// the text, each a text node.
function messageLine(who, role, text, ts) {
  const human = who === "human";
  return el("div", { class: "msg" + (human ? " human" : "") },
    el("div", { class: "head" }, el("span", { class: "who" }, who), role ? el("span", { class: "role" }, " " + role) : null,
      ts ? el("time", { class: "at", datetime: ts, title: ts }, " " + String(ts).slice(11, 16)) : null),
    el("div", { class: "text" }, clip(text, MAX_TEXT)));
}

// Rooms drawn whole: those where someone is typing, then the most recently
// active, up to OPEN_ROOMS, and any the person unfolded; the others fold to
// one line (name, count, who is typing or how long still), so a page of
// hundreds of rooms stays light. A post to a folded room draws the rooms
// again: it is now among the liveliest.
const OPEN_ROOMS = 6;
const unfolded = new Set();

function renderRooms() {
  const rooms = [...state.rooms.values()];
  const when = (r) => Date.parse(r.last_activity || r.phase.created_at) || 0;
  const active = rooms.filter((r) => r.phase.status === "active").reverse() // on a tie (same ms) the newer first
    .sort((a, b) => (b.typing.size > 0) - (a.typing.size > 0) || when(b) - when(a));
  const closed = rooms.filter((r) => r.phase.status !== "active");
  const out = active.map((r, i) => (i < OPEN_ROOMS || unfolded.has(r.phase.id) ? roomView(r) : foldedRoom(r)));
  if (closed.length) {
    out.push(el("details", { class: "closed-phases" }, el("summary", {}, closed.length + " closed phase(s)"),
      ...closed.map((r) => el("div", { class: "meta", "data-closed-phase": r.phase.id }, taskLink(r.phase.task_id), " " + r.phase.name + " — " + r.count + "/" + r.phase.message_limit + " " + (r.phase.close_reason || "")))));
  }
  if (out.length === 0) out.push(el("p", { class: "calm" }, "No phase is open."));
  $("rooms").replaceChildren(...out);
  for (const box of document.querySelectorAll("#rooms .msgs")) box.scrollTop = box.scrollHeight;
}

function roomView(r) {
  const ph = r.phase;
  const msgs = el("div", { class: "msgs" }, ...(r.messages || []).map((m) => messageLine(m.author, m.role, m.content, m.timestamp)));
  const agents = [...state.agents.values()].filter((a) => a.phase_id === ph.id);
  const live = el("div", { class: "streams" }, ...agents.map((a) => streamView(a.name)));
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
    el("div", { class: "top" }, el("strong", {}, ph.name), " ", roomCount(r), el("span", { class: "acts" }, extend, end)),
    el("div", { class: "meta info" }, ph.id + " on ", taskLink(ph.task_id), " · roles: " + (ph.roles || []).join(", ") + (ph.rules ? " · rules: " : ""), ph.rules ? clip(ph.rules, 400) : ""),
    roomPulse(r), msgs, live, say);
}

// foldedRoom is a room in one line; Open draws it whole.
function foldedRoom(r) {
  const open = el("button", { type: "button", "data-act": "unfold", onclick: () => { unfolded.add(r.phase.id); dirty.add("rooms"); render(); } }, "Open");
  return el("div", { class: "room folded", "data-phase": r.phase.id },
    el("div", { class: "top" }, el("strong", {}, r.phase.name), " ", taskLink(r.phase.task_id), " ", roomCount(r), el("span", { class: "acts" }, open)),
    roomPulse(r));
}

// roomCount is the room's messages against its limit, "7/10" and a meter.
function roomCount(r) {
  const n = num(r.count), lim = num(r.phase.message_limit);
  const full = lim > 0 && n >= 0.8 * lim;
  return el("span", { class: "count" + (full ? " full" : ""), title: n + " of " + lim + " messages" }, n + "/" + lim, meter(lim > 0 ? n / lim : 0, full ? "over" : ""));
}

// roomPulse says whether the room moves: who is typing (their turn is in
// flight), else how long nobody has posted; a task the server judges idle
// or stuck says so with the way out, so a hung room never reads as working.
function roomPulse(r) {
  const h = state.health[r.phase.task_id] || {};
  const since = r.last_activity ? el("span", { class: "ago", "data-ago": r.last_activity }, ago(r.last_activity)) : null;
  if (r.typing && r.typing.size) {
    const who = [...r.typing.keys()];
    return el("div", { class: "pulse typing" }, el("span", { class: "dots" }), who.map((n) => "@" + n).join(", ") + (who.length === 1 ? " is typing" : " are typing"),
      since ? el("span", { class: "calm" }, " · last post ", since, " ago") : null);
  }
  const stuck = h.state === "idle" || h.state === "stuck";
  return el("div", { class: "pulse " + (stuck ? "stuck" : "quiet") }, stuck ? h.state + ": " : "nobody is typing",
    since ? el("span", {}, (stuck ? "nothing moved for " : " · last activity ") , since, stuck ? "" : " ago") : null,
    stuck && h.next ? el("div", { class: "meta" }, "Try: " + h.next) : null);
}

// Every task view has its URL, #/task/tk-…: a link, the back button and a
// reload open it (route).
function taskLink(id) {
  return el("a", { href: "#/task/" + id, class: "id", "data-open-task": id }, id);
}

function route() {
  const m = /^#\/task\/(tk-[0-9a-f]+)$/.exec(location.hash);
  if (m) { openTask(m[1]); return; }
  if (detail) { detail = null; renderDetail(); }
}
window.addEventListener("hashchange", route);

// showFinished reads the finished tasks too (GET /api/state?all=1) and adds
// them to the tree: each opens at its URL with its history.
async function showFinished() {
  const s = await getJSON("/api/state?all=1&log=0");
  if (!s) return;
  for (const t of s.tasks) if (!state.tasks.has(t.id)) state.tasks.set(t.id, t);
  Object.assign(state.health, s.health || {});
  dirty.add("tasks");
  render();
}

// ago is how long since an RFC 3339 time, as pm status says it: 45s, 12m, 3h5m.
function ago(ts) {
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d" + Math.floor((s % 86400) / 3600) + "h";
}

// renderTasks draws the task graph: each task a node with its state,
// health, last activity, blockers (blocked-by edges, each a link with the
// blocker's state) and cost against budget; subtasks nested under their
// parent; live trees first. Each id opens the task's view at its URL.
function renderTasks() {
  const byID = state.tasks;
  const live = (t) => t.status === "active" || t.status === "blocked";
  const roots = [...byID.values()].filter((t) => !t.parent_id || !byID.has(t.parent_id));
  roots.sort((a, b) => Number(live(b)) - Number(live(a))); // stable: oldest first within each
  const blocks = new Map(); // blocker → the tasks it holds up
  for (const t of byID.values()) for (const b of t.blocked_by || []) blocks.set(b, [...(blocks.get(b) || []), t.id]);
  let drawn = 0;
  const node = (t) => {
    if (drawn >= treeLimit) return null;
    drawn++;
    const row = taskNode(t, blocks.get(t.id) || []);
    const kids = (t.children || []).map((id) => byID.get(id)).filter(Boolean).map(node).filter(Boolean);
    return el("li", { class: live(t) ? "live" : "over" }, row, kids.length ? el("ul", {}, ...kids) : null);
  };
  const items = roots.map(node).filter(Boolean);
  const out = [el("ul", { class: "tree graph" }, ...items)];
  if (drawn >= treeLimit) out.push(el("button", { type: "button", onclick: () => { treeLimit += MAX_TREE; renderTasks(); } }, "Show more"));
  if (state.total > byID.size) out.push(el("button", { type: "button", "data-act": "show-finished", onclick: showFinished }, "Show " + (state.total - byID.size) + " finished task" + (state.total - byID.size === 1 ? "" : "s")));
  if (byID.size === 0) out.unshift(el("p", { class: "calm" }, "No task yet."));
  $("tasks").replaceChildren(...out);
  timelineTasks();
}

// taskNode is one node of the graph.
function taskNode(t, holds) {
  const live = t.status === "active" || t.status === "blocked";
  const h = state.health[t.id];
  const hs = h && h.state !== t.status ? h.state : "";
  const edge = (id) => { const b = state.tasks.get(id); return el("span", { class: "edge-to" }, taskLink(id), b ? el("span", { class: "status " + b.status }, b.status) : null); };
  return el("div", { class: "task node " + t.status + (hs ? " h-" + hs : ""), "data-task": t.id },
    el("div", { class: "line" }, el("span", { class: "dot " + (hs || t.status), title: hs || t.status }), taskLink(t.id),
      el("span", { class: "status " + t.status }, t.status),
      hs ? el("span", { class: "health " + hs }, hs) : null,
      live && h && h.last_activity ? el("span", { class: "ago", "data-last-activity": h.last_activity }, "· ", el("span", { "data-ago": h.last_activity }, ago(h.last_activity)), " ago") : null,
      live ? el("span", { class: "acts" },
        el("button", { type: "button", "data-act": "kill", onclick: () => confirmKill(t.id, false) }, "Kill"),
        el("button", { type: "button", "data-act": "restart", onclick: () => confirmKill(t.id, true) }, "Restart")) : null),
    el("div", { class: "desc" }, clip(t.description, 600)),
    (t.blocked_by || []).length ? el("div", { class: "edge" }, "blocked by ", ...t.blocked_by.map(edge)) : null,
    holds.length ? el("div", { class: "edge" }, "holds up ", ...holds.map(edge)) : null,
    taskCostBar(t.id));
}

// ---- costs: dollars against budget, as bars; unknown is unknown, never $0

// sumText words a ledger sum like internal/cost's Sum.String.
function sumText(sum) {
  const unknown = num(sum.unknown), entries = num(sum.entries);
  if (unknown > 0 && unknown === entries) return "unknown";
  if (unknown > 0) return usdText(num(sum.usd)) + " + unknown (" + unknown + ")";
  return usdText(num(sum.usd));
}

// meter is a bar filled to frac (0..1, more is cut at full).
function meter(frac, cls) {
  const fill = el("span", { class: "fill" });
  fill.style.width = Math.max(0, Math.min(1, frac)) * 100 + "%"; // CSSOM: the CSP forbids style attributes
  return el("span", { class: "meter " + (cls || "") }, fill);
}

// costBar is one cost line against its cap: the known dollars fill the bar
// (marked from 80% of the cap), what has no price hatches it and reads
// "unknown"; a line with no entry yet says so (nothing was spent, or an
// exec run not ended); with no cap the bar is against scale (the largest
// line of its list).
function costBar(line, cap, scale) {
  const sum = (line && line.sum) || {};
  const usd = num(sum.usd), unknown = num(sum.unknown), entries = num(sum.entries);
  const text = entries === 0 ? "no model calls yet" : (line.cost || sumText(sum));
  const over = cap > 0 && usd >= 0.8 * cap;
  const frac = cap > 0 ? usd / cap : scale > 0 ? usd / scale : 0;
  const cls = (over ? "over" : "") + (unknown > 0 ? " unknown" : "") + (cap > 0 ? "" : " nocap");
  return el("span", { class: "cost", title: cap > 0 ? "budget " + usdText(cap) : "no dollar budget" }, meter(frac, cls),
    el("span", { class: "amount" + (unknown > 0 ? " unknown" : "") }, text + (cap > 0 ? " of " + usdText(cap) : "")));
}

function taskCostBar(id) {
  const b = state.budgets || {};
  return costBar(state.costs.tasks.get(id), num(b.task && b.task.max_usd), 0);
}

// renderCosts is the project's windows, then each task's and each agent's
// dollars against their budgets, the costliest first.
function renderCosts() {
  renderSpend();
  const b = state.budgets || {};
  const rows = (lines, cap, label, key) => {
    const list = [...lines].sort((x, y) => num(y[1].sum.usd) - num(x[1].sum.usd) || num(y[1].sum.unknown) - num(x[1].sum.unknown)).slice(0, MAX_BARS);
    const scale = Math.max(0, ...list.map(([, l]) => num(l.sum.usd)));
    return list.map(([k, l]) => el("div", { class: "cost-row", [key]: k }, label(k, l), costBar(l, cap, scale)));
  };
  const windows = (state.windows || []).map((w) => el("div", { class: "cost-row", "data-cost-window": w.key }, el("span", { class: "name" }, w.window),
    costBar({ sum: w.sum, cost: w.cost }, num(w.limit), 0)));
  const tasks = rows(state.costs.tasks, num(b.task && b.task.max_usd), (k) => el("span", { class: "name" }, taskLink(k)), "data-cost-task");
  const agents = rows(state.costs.agents, num(b.agent && b.agent.max_usd), (k, l) => el("span", { class: "name" }, el("span", { class: "who" }, k), l.task ? el("span", { class: "calm" }, " " + l.task) : null), "data-cost-agent");
  const list = (title, items) => items.length ? [el("h3", {}, title), ...items] : [];
  const out = [...list("Project", windows), ...list("By task", tasks), ...list("By agent", agents)];
  if (tasks.length === 0 && agents.length === 0) out.push(el("p", { class: "calm" }, "No model call recorded yet."));
  $("costs").replaceChildren(...out);
}

// ---- usage against budgets

// wallSeconds is the time the agent's wall-time budget counts: an llm
// agent's from its creation (across respawns), an exec agent's from the
// start of its current run (each host run is bounded on its own).
function wallSeconds(a) {
  const from = Date.parse(a.runtime === "exec" && a.started_at ? a.started_at : a.created_at);
  const to = a.ended_at ? Date.parse(a.ended_at) : Date.now();
  return isNaN(from) ? 0 : Math.max(0, Math.round((to - from) / 1000));
}

// reportsUsage: an exec agent's CLI reports turns and tokens only when its
// output is read (runtime.exec.output, Claude Code's stream-json); until it
// does, they are unknown, never 0.
const reportsUsage = (a) => a.runtime !== "exec" || num(a.usage && a.usage.turns) > 0 || num(a.usage && a.usage.tokens) > 0;

// against shows "used / limit", marked when at or over 80% of the limit;
// "unknown" when the runtime does not report it.
function against(used, limit, label, unknown) {
  if (unknown) return el("td", { "data-label": label, class: "unknown" }, "unknown");
  const over = limit > 0 && used >= 0.8 * limit;
  return el("td", { class: over ? "over" : "", "data-label": label }, limit > 0 ? used + " / " + limit : String(used));
}

function usageRow(name, task, status, u, wall, b, restarts, extra, unknown) {
  return el("tr", extra || {}, el("td", { "data-label": "agent" }, name), el("td", { "data-label": "task" }, task), el("td", { "data-label": "status" }, status),
    against(num(u.turns), b.max_turns, "turns", unknown), against(num(u.tool_calls), b.max_tool_calls, "tool calls", unknown), against(num(u.tokens), b.max_tokens, "tokens", unknown),
    againstUSD(u, b.max_usd),
    wall === "" ? el("td", { "data-label": "run time" }) : against(wall, b.max_wall_seconds, "run time (s)"), el("td", { "data-label": "restarts" }, restarts === "" ? "" : String(restarts)));
}

// ---- dollars: as pm costs words them; unknown is unknown, never $0

// usdText formats dollars like internal/cost.USD.
function usdText(v) {
  if (v === 0) return "$0";
  return v < 1 ? "$" + v.toFixed(4) : "$" + v.toFixed(2);
}

// dollars is a usage's cost: its known dollars, and the calls without a
// price (or without usage) kept apart.
function dollars(u) {
  const usd = num(u.usd), unknown = num(u.unpriced);
  if (usd === 0 && unknown === 0 && num(u.turns) === 0) return "no calls yet"; // nothing spent, nothing known
  if (unknown > 0 && usd === 0) return "unknown";
  return unknown > 0 ? usdText(usd) + " + unknown (" + unknown + ")" : usdText(usd);
}

// againstUSD shows dollars against a cap, marked from 80% of it.
function againstUSD(u, limit) {
  const over = limit > 0 && num(u.usd) >= 0.8 * limit;
  return el("td", { class: over ? "over" : "", "data-label": "dollars" }, limit > 0 ? dollars(u) + " / " + usdText(limit) : dollars(u));
}

// withDollars carries an agent's dollars into its new usage from an
// agent.turn event (d.usd: the call's dollars, null when unknown).
function withDollars(u, prev, d) {
  const p = prev || {};
  u.usd = num(p.usd) + (d.usd == null ? 0 : num(d.usd));
  u.unpriced = num(p.unpriced) + (d.usd == null ? 1 : 0);
  return u;
}

// renderSpend is the project's windows against their caps (GET /api/state).
function renderSpend() {
  const out = (state.windows || []).map(w => w.window + ": " + w.cost + (w.limit > 0 ? " of " + usdText(w.limit) + " (" + w.key + ")" : ""));
  $("spend").textContent = out.length ? "project, " + out.join(" · ") : "";
}

function usageRows(agents, budgets) {
  const b = budgets || { agent: {}, task: {} };
  const byTask = new Map();
  for (const a of agents) {
    if (!byTask.has(a.task_id || "")) byTask.set(a.task_id || "", []);
    byTask.get(a.task_id || "").push(a);
  }
  const rows = [];
  for (const [task, list] of byTask) {
    if (task) {
      const sum = { turns: 0, tool_calls: 0, tokens: 0, usd: 0, unpriced: 0 };
      for (const a of list) for (const k of Object.keys(sum)) sum[k] += num(a.usage && a.usage[k]);
      rows.push(usageRow("task total", task, "", sum, "", b.task || {}, "", { class: "total", "data-usage-task": task }));
    }
    for (const a of list) {
      rows.push(usageRow(a.name, task, a.status + (a.activity ? " (" + a.activity + ")" : ""), a.usage || {}, wallSeconds(a), b.agent || {}, a.restarts, { "data-usage-agent": a.name }, !reportsUsage(a)));
    }
  }
  return rows;
}

// renderUsage is every live agent's usage but the open task's, which its
// detail shows (usage is shown once): a row says where they are.
// The table is folded: it is drawn only while unfolded (a folded table of
// hundreds of agents would cost the page thousands of nodes), and drawn
// again when unfolded.
function renderUsage() {
  renderSpend();
  if (!$("usage-box").querySelector("details").open) { $("usage").tBodies[0].replaceChildren(); return; }
  const open = detail ? detail.task.id : "";
  const rows = usageRows([...state.agents.values()].filter((a) => !open || a.task_id !== open), state.budgets);
  if (open && [...state.agents.values()].some((a) => a.task_id === open)) {
    rows.unshift(el("tr", { class: "elsewhere" }, el("td", { colspan: "9" }, taskLink(open), " — its agents' usage is in its detail above")));
  }
  $("usage").tBodies[0].replaceChildren(...rows);
}

// ---- the task detail: its tree, every phase with messages, agents,
// requests, usage against budgets, commit. It is read from GET /api/task
// and read again (at most every 300 ms) when an event of the task that may
// change it arrives (the frame's "changes"); tool calls, thinking, streamed
// text and activity do not read it again.

// diffWanted is the open task whose changes so far the person asked for (a
// working task's diff walks its worktree, so it is read only on request,
// and then on each re-read of that task).
let diffWanted = null;

async function openTask(id, withDiff) {
  if (withDiff) diffWanted = id;
  else if (diffWanted !== id) diffWanted = null;
  const d = await getJSON("/api/task?id=" + encodeURIComponent(id) + (diffWanted === id ? "&diff=1" : ""));
  if (!d) return;
  detail = d;
  renderDetail();
}

// detailActivity shows an agent's activity in the open detail's usage table
// in place: activity changes are too frequent to read the detail again.
function detailActivity(name, activity) {
  const a = detail && (detail.agents || []).find((x) => x.name === name);
  if (a && a.activity !== activity) { a.activity = activity; renderDetail(); }
}

function scheduleDetail() {
  if (detailTimer) return;
  detailTimer = setTimeout(() => { detailTimer = null; if (detail) openTask(detail.task.id); }, 300);
}

function treeOf(id, depth) {
  const t = (state && state.tasks.get(id)) || (detail.task.id === id ? detail.task : null);
  if (!t || depth > 20) return el("li", {}, taskLink(id));
  const kids = (t.children || []).map((k) => treeOf(k, depth + 1));
  return el("li", {}, taskLink(t.id), " ", el("span", { class: "status " + t.status }, t.status), " ", el("span", { class: "desc" }, t.description),
    kids.length ? el("ul", {}, ...kids) : null);
}

function renderDetail() {
  const box = $("detail-box");
  box.hidden = !detail;
  dirty.add("usage"); // the Usage table leaves out the open task's agents
  scheduleRender();
  if (!detail) return;
  const t = detail.task;
  const h = detail.health || {};
  const root = t.parent_id ? t.parent_id : t.id;
  const phases = detail.rooms.map((r) => el("details", { class: "phase " + r.phase.status, "data-detail-phase": r.phase.id, open: r.phase.status === "active" ? "" : null },
    el("summary", {}, r.phase.name + " — " + r.phase.status + " " + r.count + "/" + r.phase.message_limit + (r.phase.close_reason ? " (" + r.phase.close_reason + ")" : "")),
    el("div", { class: "meta" }, "roles: " + (r.phase.roles || []).join(", ") + (r.phase.rules ? " · rules: " : ""), r.phase.rules || ""),
    el("div", { class: "msgs" }, ...(r.messages || []).map((m) => messageLine(m.author, m.role, m.content, m.timestamp)))));
  // Each agent's log's end (exec agents' output is only there), as text.
  const logs = (detail.logs || []).filter((l) => l.text).map((l) => el("details", { class: "log", "data-agent-log": l.agent },
    el("summary", {}, "@" + l.agent + (l.cut ? " (last part)" : "")), el("pre", {}, l.text)));
  const requests = (detail.requests || []).map((rq) => el("div", { class: "card request" }, el("span", { class: "who" }, rq.from), " asks: ", clip(rq.question, MAX_TEXT)));
  const usage = el("table", { class: "usage" }, el("thead", {}, el("tr", {}, ...["agent", "task", "status", "turns", "tool calls", "tokens", "dollars", "run time (s)", "restarts"].map((c) => el("th", {}, c)))),
    el("tbody", {}, ...usageRows(detail.agents || [], detail.budgets)));
  box.replaceChildren(
    el("h2", {}, "Task ", t.id, " ", el("button", { type: "button", onclick: () => { location.hash = ""; detail = null; renderDetail(); } }, "Close")),
    el("p", { class: "desc" }, t.description),
    el("p", { class: "meta" }, "status " + t.status + " · health " + (h.state || "") + (h.reason ? ": " : ""), clip(h.reason, MAX_TEXT),
      " · owner ", el("span", { class: "who" }, t.owner || ""), t.commit ? " · commit " + t.commit : "",
      (t.blocked_by || []).length ? " · waits for " + t.blocked_by.join(", ") : ""),
    el("h3", {}, "Tree"), el("ul", { class: "tree" }, treeOf(root, 0)),
    el("h3", {}, "Phases"), phases.length ? el("div", {}, ...phases) : el("p", { class: "calm" }, "No phase yet."),
    el("div", { class: "streams" }, streamView(t.owner)),
    el("h3", {}, "Requests"), requests.length ? el("div", {}, ...requests) : el("p", { class: "calm" }, "None pending."),
    el("h3", {}, "Changes"), changesView(t, detail.diff, detail.diff_error),
    el("h3", {}, "Agents and usage"), usage,
    el("h3", {}, "Agent logs"), logs.length ? el("div", { class: "logs" }, ...logs) : el("p", { class: "calm" }, "No log yet."));
}

// changesView is a task's branch against where it started (pm diff), and,
// while its merge waits (review, conflict, a dirty checkout), the human's
// ways on: merge (--theirs/--ours on a conflict) or send it back.
function changesView(t, diff, err) {
  if (err) return el("p", { class: "bad" }, "Its diff could not be read: " + err);
  if (!diff && t.worktree && !t.merge && (t.status === "active" || t.status === "blocked")) {
    return el("button", { type: "button", "data-act": "show-diff", onclick: () => openTask(t.id, true) }, "Show its changes so far");
  }
  if (!diff) return el("p", { class: "calm" }, "No branch of its own (no git repository, or isolation \"none\").");
  const files = (diff.files || []).map((f) => el("details", { class: "file", "data-diff-file": f.path },
    el("summary", {}, f.status + " " + f.path + (f.binary ? " (binary)" : " +" + f.added + " −" + f.deleted)),
    f.patch ? el("pre", { class: "patch" }, f.patch + (f.cut ? "\n… cut here: pm diff " + t.id + " shows all of it" : "")) : null));
  const head = el("p", { class: "meta" }, "branch " + diff.branch + " → " + diff.into + " · " + files.length + " file" + (files.length === 1 ? "" : "s") +
    (diff.uncommitted ? " · still working: its worktree as pm done would commit it now" : ""));
  const m = t.merge;
  let acts = null;
  if (m) {
    const why = draftInput("reject:" + t.id, "Why it goes back (its owner reads this)");
    const reject = el("form", { class: "answer", "data-act": "reject-form" }, why, el("button", { type: "submit" }, "Send back"));
    reject.addEventListener("submit", async (e) => {
      e.preventDefault();
      await post("/api/reject", { task: t.id, why: why.value });
      clearDraft(why);
      scheduleDetail();
    });
    const merge = (body, label, act) => el("button", { type: "button", "data-act": act, onclick: async () => { await post("/api/merge", body); scheduleDetail(); } }, label);
    acts = el("div", { class: "card request", "data-merge": t.id },
      el("div", {}, "Its merge waits: " + m.state + ((m.paths || []).length ? " (" + m.paths.join(", ") + ")" : "")),
      el("div", { class: "acts" }, merge({ task: t.id }, "Merge", "merge"),
        m.state === "conflict" ? merge({ task: t.id, theirs: true }, "Merge, the task's side", "merge-theirs") : null,
        m.state === "conflict" ? merge({ task: t.id, ours: true }, "Merge, the branch's side", "merge-ours") : null),
      reject);
  } else if (t.merged) {
    head.append(" · merged as " + t.merged.slice(0, 12));
  }
  return el("div", { class: "changes" }, head, acts, ...files);
}

// ---- notifications (opt-in)

function notify(ev) {
  if (window.Notification && Notification.permission === "granted") {
    new Notification("pm: " + (ev.actor || "an agent") + " asks", { body: clip(ev.text, 200) });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("notify").addEventListener("click", () => window.Notification && Notification.requestPermission());
  $("timeline-task").addEventListener("change", (e) => filterTimeline(e.target.value));
  $("usage-box").querySelector("details").addEventListener("toggle", () => { if (state) { dirty.add("usage"); render(); } });
  $("new-task").addEventListener("submit", async (e) => {
    e.preventDefault();
    const input = $("new-task-text"), on = $("new-task-on");
    const body = { description: input.value };
    if (on.value.trim()) body.on = on.value.trim(); // else placed by free capacity
    try {
      await post("/api/task", body);
    } catch (_) {
      return; // post showed the error (an unknown worker: Try: pm workers); the form keeps what was typed
    }
    input.value = "";
  });
  start();
});

// pushBudgetStop keeps the last ten budget stops, all the page shows.
function pushBudgetStop(ev) {
  state.budgetStops.push(ev);
  if (state.budgetStops.length > 10) state.budgetStops.splice(0, state.budgetStops.length - 10);
}
