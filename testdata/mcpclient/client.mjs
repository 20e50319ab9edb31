// End-to-end client for `pm mcp`, driven by internal/mcpserver/e2e_test.go:
// the official TypeScript SDK talks to the real pm binary over stdio or
// Streamable HTTP. It prints one line "OK {figures}" or exits non-zero.
//
// Environment: PM_BIN (the pm binary), PM_HOME (an initialised state dir
// whose greeter is scripted by the test model), PM_TEST_TASK and
// PM_TEST_PHASE (a task and its active phase). Argument: stdio | http.
import { spawn, execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const mode = process.argv[2];
const { PM_BIN, PM_TEST_TASK: task, PM_TEST_PHASE: phase } = process.env;
const HANG = 60_000; // hang guard only, never a speed assertion

function check(cond, what) {
  if (!cond) throw new Error("check failed: " + what);
}
const text = (res) => res.content.map((c) => c.text).join("");
const json = (res) => JSON.parse(text(res));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn) {
  const end = Date.now() + HANG;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await sleep(20);
  }
}

async function connect() {
  const client = new Client({ name: "pm-e2e", version: "1.0.0" });
  if (mode === "stdio") {
    const t = new StdioClientTransport({ command: PM_BIN, args: ["mcp"], env: process.env, stderr: "inherit" });
    await client.connect(t);
    return { client, close: () => client.close() };
  }
  const token = "e2e-token-" + process.pid;
  const srv = spawn(PM_BIN, ["mcp", "--http", "127.0.0.1:0"], { env: { ...process.env, PM_MCP_TOKEN: token }, stdio: ["ignore", "inherit", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let buf = "";
    srv.stderr.on("data", (d) => {
      buf += d;
      const m = buf.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    srv.on("exit", (code) => reject(new Error("pm mcp --http exited " + code + ": " + buf)));
  });
  // Without the token the endpoint refuses.
  const anon = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  check(anon.status === 401, "no token: 401, got " + anon.status);
  const t = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer " + token } } });
  await client.connect(t);
  return { client, close: async () => { await client.close(); srv.kill(); } };
}

const { client, close } = await connect();
const figures = { mode };

// Tools, resources and templates are listed.
const tools = (await client.listTools()).tools.map((t) => t.name);
for (const n of ["list_prompt_objects", "send_message", "get_conversation", "inspect_po", "get_pending_requests",
  "respond_to_request", "create_task", "task_status", "say", "chat", "end_phase", "kill_task", "wait_task"]) {
  check(tools.includes(n), "tool " + n);
}
const resources = (await client.listResources()).resources.map((r) => r.uri);
for (const u of ["bus://messages", "pm://tasks", "po://greeter/conversation", "po://greeter/config", "po://greeter/prompt"]) {
  check(resources.includes(u), "resource " + u);
}
const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
check(templates.length === 5 && templates.includes("pm://phases/{id}/messages"), "templates " + templates);

// Every resource reads, listed ones and those of the templates.
for (const uri of [...resources, `pm://tasks/${task}`, `pm://phases/${phase}/messages`]) {
  const r = await client.readResource({ uri });
  check(r.contents.length === 1 && r.contents[0].text.length > 0, "read " + uri);
}
let bad = null;
try { await client.readResource({ uri: "po://nope/config" }); } catch (e) { bad = e; }
check(bad && /no prompt object "nope"/.test(bad.message), "unknown PO resource: " + bad);
const unknown = await client.callTool({ name: "inspect_po", arguments: { po_name: "nope" } });
check(unknown.isError && /^not found: no prompt object "nope"\nTry: /.test(text(unknown)), "tool error: " + text(unknown));

// A message to the greeter, answered by the test model, with progress.
let progress = 0;
const t0 = Date.now();
const hi = json(await client.callTool({ name: "send_message", arguments: { po_name: "greeter", message: "hi" } }, undefined,
  { onprogress: () => progress++, timeout: HANG }));
figures.first_send_ms = Date.now() - t0;
check(hi.response === "Hello from the garden, friend!" && hi.po_name === "greeter" && hi.history_length >= 2, "reply " + JSON.stringify(hi));
check(progress >= 1, "progress notifications: " + progress);
figures.progress = progress;
const conv = json(await client.callTool({ name: "get_conversation", arguments: { po_name: "greeter", limit: 1 } }));
check(conv.history.length === 1 && conv.history[0].content === "Hello from the garden, friend!", "conversation " + JSON.stringify(conv));

// While a send waits on ask_human, the same client lists and answers it.
async function pendingRequest() {
  const p = json(await client.callTool({ name: "get_pending_requests", arguments: { po_name: "greeter" } }));
  return p.count > 0 ? p.requests[0] : null;
}
const asking = client.callTool({ name: "send_message", arguments: { po_name: "greeter", message: "ask me" } }, undefined, { timeout: HANG });
const rq = await until("the greeter's question", pendingRequest);
check(rq.question === "Shall I go on?", "question " + rq.question);
const answered = json(await client.callTool({ name: "respond_to_request", arguments: { request_id: rq.id, response: "yes" } }));
check(answered.success && answered.capability === "greeter", "respond " + JSON.stringify(answered));
const after = json(await asking);
check(after.response === "Thanks for answering.", "reply after the answer " + JSON.stringify(after));

// Subscribed to the phase, the client hears of a `pm say` at once.
const phaseURI = `pm://phases/${phase}/messages`;
let heard;
const updated = new Promise((resolve) => { heard = resolve; });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { if (n.params.uri === phaseURI) heard(Date.now()); });
await client.subscribeResource({ uri: phaseURI });
execFileSync(PM_BIN, ["say", "--phase", phase, "hello from the CLI"], { env: process.env });
const said = Date.now();
figures.updated_after_say_ms = (await updated) - said; // from pm say's exit; may be <= 0
const msgs = JSON.parse((await client.readResource({ uri: phaseURI })).contents[0].text);
check(msgs.messages.some((m) => m.content === "hello from the CLI"), "phase messages");

// A long send is cancelled; the server keeps serving.
const ac = new AbortController();
const long = client.callTool({ name: "send_message", arguments: { po_name: "greeter", message: "take long" } }, undefined, { signal: ac.signal, timeout: HANG });
const rq2 = await until("the second question", pendingRequest);
ac.abort();
let cancelled = null;
try { await long; } catch (e) { cancelled = e; }
check(cancelled !== null, "the cancelled send rejected");
await client.callTool({ name: "respond_to_request", arguments: { request_id: rq2.id, response: "never mind" } });
check((await client.listTools()).tools.length === tools.length, "serving after a cancel");

await close();
console.log("OK " + JSON.stringify(figures));
