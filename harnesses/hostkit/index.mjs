// fabric-node-host: a fabric.host/v2 adapter host for Node programs that
// drive an agent library in-process. The core passes one end of a Unix
// socket pair as the channel fd (FABRIC_HOST_CHANNEL_FD, normally 3); frames
// are compact JSON-RPC 2.0 objects, one per line (internal/wire/PROTOCOL.md
// in the Fabric repository is the normative description).
//
// An engine is what a library host plugs in:
//
//   { name, codePrefix, async start(ctx) -> session }
//   session.invoke({ input, signal, emit }) -> { status, output, usage?, error? }
//   session.stop() (optional)
//
// The kit owns the lifecycle: one invoke at a time (runtime_busy otherwise),
// cancel (the invoke's AbortSignal fires and every process the runtime's
// shell started is killed), health answered while a turn runs, stop (abort,
// kill, remove the private directories, answer, exit). It never logs a key:
// the model key is read from the variable the config names and scrubbed
// from everything the host sends.

import net from "node:net";
import fs from "node:fs";
import path from "node:path";

const maxFrame = 16 << 20;
const lifecycleError = 1000;
// cancelWait bounds how long a cancelled turn may take to wind down before
// the kit answers it as cancelled anyway (below the core's cancel grace).
const cancelWait = 1500;
const maxEventText = 8 << 10;

/** A lifecycle failure with a stable code. */
export class HostError extends Error {
  constructor(code, message, retryable = false) {
    super(message);
    this.code = code;
    this.retryable = retryable;
  }
}

/** The model the config selects: models.default, else the first by name. */
export function selectModel(config, codePrefix) {
  const models = config?.models ?? {};
  const name = "default" in models ? "default" : Object.keys(models).sort()[0];
  const m = name === undefined ? undefined : models[name];
  if (!m) throw new HostError(`${codePrefix}_invalid_config`, "no model configured (models.default)");
  if (!m.base_url) {
    throw new HostError(`${codePrefix}_invalid_config`, `models.${name}.base_url is required: the harness is pointed only at the configured endpoint`);
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(m.api_key_env ?? "")) {
    throw new HostError(`${codePrefix}_invalid_config`, `models.${name}.api_key_env must name an environment variable`);
  }
  const key = process.env[m.api_key_env];
  if (!key) {
    throw new HostError(`${codePrefix}_invalid_config`, `environment variable ${m.api_key_env} (models.${name}.api_key_env) is not set`);
  }
  return { provider: m.provider, model: m.model, baseURL: m.base_url.replace(/\/+$/, ""), keyEnv: m.api_key_env, key, settings: m.settings ?? {} };
}

/** The system instruction of the config: { content, mode } or null. */
export function systemInstruction(config) {
  const s = config?.instructions?.system;
  return s && s.content ? { content: s.content, mode: s.mode === "append" ? "append" : "replace" } : null;
}

/** The text of an AgentRunRequest input (a string, or parts with text). */
export function inputText(input) {
  if (typeof input === "string") return input;
  if (Array.isArray(input)) return input.map(inputText).join("");
  if (input && typeof input === "object") {
    if (typeof input.text === "string") return input.text;
    if (typeof input.content === "string") return input.content;
    if (Array.isArray(input.content)) return inputText(input.content);
  }
  return input == null ? "" : JSON.stringify(input);
}

/** Cuts an event text to the kit's bound. */
export function cut(s) {
  return s.length > maxEventText ? s.slice(0, maxEventText) : s;
}

// pidsWithEnv lists the processes (other than this one) whose environment
// holds entry, read from /proc; unreadable ones are someone else's.
function pidsWithEnv(entry) {
  const out = [];
  let names;
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return out;
  }
  const want = Buffer.from(entry + "\0");
  for (const n of names) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${n}/environ`);
      if (env.indexOf(want) === 0 || env.indexOf(Buffer.concat([Buffer.from("\0"), want])) >= 0) out.push(Number(n));
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

// killMarked kills every process carrying the runtime's marker: the shell
// commands the harness started, including those that left its process
// group (setsid). Repeats until none is left or the bound passes.
function killMarked(entry, rounds = 20) {
  let pids = [];
  for (let i = 0; i < rounds; i++) {
    pids = pidsWithEnv(entry);
    if (pids.length === 0) return 0;
    for (const p of pids) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  return pids.length;
}

/**
 * Serves one runtime on the channel fd. Returns when the host should exit.
 */
export async function serve(engine) {
  const fd = Number(process.env.FABRIC_HOST_CHANNEL_FD);
  if (process.env.FABRIC_HOST_PROTOCOL !== "fabric.host/v2" || !Number.isInteger(fd) || fd < 3) {
    process.stderr.write(`${engine.name}: no fabric.host/v2 channel (FABRIC_HOST_CHANNEL_FD); this program is started by Fabric\n`);
    process.exitCode = 2;
    return;
  }
  // Tracing that would leave the machine stays off whatever the ambient
  // environment says.
  for (const k of ["LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING", "LANGSMITH_TRACING_V2"]) delete process.env[k];

  const sock = new net.Socket({ fd, readable: true, writable: true });
  const log = (msg, attrs = {}) => process.stderr.write(`${engine.name}: ${msg}${Object.entries(attrs).map(([k, v]) => ` ${k}=${v}`).join("")}\n`);
  let key = "";
  const scrub = (s) => (key.length >= 4 && typeof s === "string" ? s.split(key).join("[redacted]") : s);
  const send = (obj) => {
    const line = JSON.stringify(obj);
    if (line.length > maxFrame) throw new Error("frame too large");
    if (!sock.destroyed) sock.write(line + "\n");
  };
  const home = process.env.FABRIC_HOME || "";
  const marker = home ? `FABRIC_HOME=${home}` : "";
  const priv = home ? path.join(home, "nodehost") : "";

  let session = null;
  let started = false;
  let stopping = false;
  let broken = false;
  let running = null; // { id, ctrl, done }

  const fail = (stage, e) => {
    const code = e instanceof HostError ? e.code : `${engine.codePrefix}_${stage}_failed`;
    const message = scrub(String(e?.message ?? e)) || `${stage} failed`;
    return { code: lifecycleError, message, data: { stage, code, message, retryable: e?.retryable === true } };
  };

  const finish = () => {
    if (marker) killMarked(marker);
    if (priv) fs.rmSync(priv, { recursive: true, force: true });
  };

  const methods = {
    async start(p) {
      if (started) throw new HostError("lifecycle_already_started", "the runtime is already started");
      started = true;
      const config = p?.config ?? {};
      const workspace = p?.runtime_context?.environment?.workspace || process.cwd();
      const dirs = priv ? { home: path.join(priv, "home"), tmp: path.join(priv, "tmp") } : { home: process.env.HOME, tmp: process.env.TMPDIR || "/tmp" };
      if (priv) for (const d of [dirs.home, dirs.tmp]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
      // The environment of shell commands: enough to run tools, the private
      // HOME and TMPDIR, the runtime's marker, and no credential.
      const shellEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home, TMPDIR: dirs.tmp, LANG: process.env.LANG || "C.UTF-8", TERM: "dumb" };
      if (home) shellEnv.FABRIC_HOME = home;
      const model = selectModel(config, engine.codePrefix);
      key = model.key;
      try {
        session = await engine.start({ config, settings: config.harness?.settings ?? {}, model, instruction: systemInstruction(config), workspace, shellEnv, log });
      } catch (e) {
        finish();
        throw e instanceof HostError ? e : new HostError(`${engine.codePrefix}_start_failed`, String(e?.message ?? e));
      }
      log("started", { model: model.model, key_env: model.keyEnv, workspace });
      return { metadata: { harness: engine.name } };
    },

    async invoke(p) {
      if (!session) throw new HostError("lifecycle_not_started", "the runtime is not started");
      if (stopping) throw new HostError("lifecycle_stop_in_progress", "the runtime is stopping");
      const id = p?.runtime_context?.invocation_id ?? "";
      if (running) throw new HostError("runtime_busy", `${running.id} is running`, true);
      const ctrl = new AbortController();
      const emit = (kind, message, metadata) => {
        if (ctrl.signal.aborted && kind !== "status") return;
        const event = { kind, timestamp_millis: Date.now() };
        if (message) event.message = scrub(message);
        if (metadata) event.metadata = JSON.parse(scrub(JSON.stringify(metadata)));
        send({ jsonrpc: "2.0", method: "event", params: { invocation_id: id, event } });
      };
      const turn = { id, ctrl };
      running = turn;
      const work = session.invoke({ input: inputText(p?.request?.input), signal: ctrl.signal, emit });
      turn.done = work.catch(() => {});
      try {
        const aborted = new Promise((resolve) => ctrl.signal.addEventListener("abort", () => setTimeout(resolve, cancelWait, null), { once: true }));
        let res = await Promise.race([work, aborted]);
        if (ctrl.signal.aborted) res = { status: "cancelled", output: res?.output ?? "" };
        res.output = scrub(res.output ?? "");
        if (res.error) res.error.message = scrub(res.error.message) || "the turn failed";
        return res;
      } catch (e) {
        if (ctrl.signal.aborted) return { status: "cancelled", output: "" };
        const code = e instanceof HostError ? e.code : `${engine.codePrefix}_model_error`;
        return { status: "failed", output: "", error: { code, message: scrub(String(e?.message ?? e)) || "the turn failed", retryable: false } };
      } finally {
        if (running === turn) running = null;
      }
    },

    async cancel(p) {
      const t = running;
      if (!t || (p?.invocation_id && p.invocation_id !== t.id)) return { cancelled: false };
      if (!t.ctrl.signal.aborted) {
        t.ctrl.abort(new Error("cancelled by Fabric"));
        // The turn's shell commands end now, not when the library notices.
        if (marker) killMarked(marker);
      }
      return { cancelled: true };
    },

    async health(p) {
      const level = p?.level;
      const h = { source: engine.name, activity: running ? "busy" : "idle", observed_at_millis: Date.now(), metadata: { pid: process.pid } };
      if (!["live", "active", "ready"].includes(level)) return { ...h, outcome: "unsupported", reason_code: "unsupported_level" };
      if (level !== "live" && !session) return { ...h, outcome: "failed", reason_code: "session_closed", message: "the runtime is not started" };
      if (level === "ready" && broken) return { ...h, outcome: "failed", reason_code: "health_failed", message: "the session is broken" };
      return { ...h, outcome: "passed" };
    },

    async stop() {
      stopping = true;
      const t = running;
      if (t) {
        t.ctrl.abort(new Error("runtime stopping"));
        if (marker) killMarked(marker);
        await Promise.race([t.done, new Promise((r) => setTimeout(r, cancelWait))]);
      }
      try {
        await session?.stop?.();
      } catch (e) {
        log("stop failed", { err: scrub(String(e?.message ?? e)) });
      }
      session = null;
      finish();
      return null;
    },
  };

  const handle = async (msg) => {
    const { id, method } = msg;
    const isCall = id !== undefined;
    const fn = Object.hasOwn(methods, method) ? methods[method] : null;
    if (!fn) {
      if (isCall) send({ jsonrpc: "2.0", id, error: { code: -32601, message: `method not found: ${method}` } });
      return;
    }
    const stage = method === "start" || method === "stop" ? method : "invoke";
    try {
      const result = await fn(msg.params);
      if (isCall) send({ jsonrpc: "2.0", id, result: result ?? null });
    } catch (e) {
      if (method === "start") broken = true;
      if (isCall) send({ jsonrpc: "2.0", id, error: fail(stage, e) });
    }
    if (method === "stop" || (method === "start" && !session)) {
      // Answer, then exit once the answer is written.
      sock.end(() => process.exit(0));
    }
  };

  await new Promise((resolve) => {
    let buf = "";
    let dead = false; // after a fatal frame nothing more is read
    sock.setEncoding("utf8");
    sock.on("data", (chunk) => {
      if (dead) return;
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        if (line.trim() === "") continue;
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          // Fatal: answer once, close the channel, exit (below).
          send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
          sock.end(() => sock.destroy());
          dead = true;
          return;
        }
        if (msg === null || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") {
          if (msg && typeof msg === "object" && !Array.isArray(msg) && ("result" in msg || "error" in msg)) continue; // a response: the kit makes no calls
          send({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "invalid request" } });
          continue;
        }
        handle(msg);
      }
      if (buf.length > maxFrame) {
        log("a frame from the core exceeds the frame limit; closing");
        sock.destroy();
      }
    });
    sock.on("error", (e) => log("channel error", { err: e.message }));
    sock.on("close", resolve);
  });
  // The core went away without stop: end the turn and clean up.
  running?.ctrl.abort(new Error("channel closed"));
  try {
    await session?.stop?.();
  } catch {
    // exiting anyway
  }
  finish();
  process.exit(0);
}

/**
 * Drives an engine without Fabric, for comparisons: the model from
 * FABRIC_DIRECT_BASE_URL, FABRIC_DIRECT_MODEL and FABRIC_DIRECT_KEY_ENV,
 * the workspace FABRIC_DIRECT_WORKSPACE (default the working directory);
 * one turn per stdin line, one JSON line {status, output} per turn on
 * stdout. Ends at end of stdin.
 */
export async function driveDirect(engine) {
  const e = process.env;
  const config = { models: { default: { provider: "direct", model: e.FABRIC_DIRECT_MODEL, base_url: e.FABRIC_DIRECT_BASE_URL, api_key_env: e.FABRIC_DIRECT_KEY_ENV } } };
  const model = selectModel(config, engine.codePrefix);
  const workspace = e.FABRIC_DIRECT_WORKSPACE || process.cwd();
  const shellEnv = { PATH: e.PATH ?? "/usr/bin:/bin", HOME: e.HOME ?? workspace, TMPDIR: e.TMPDIR ?? "/tmp", LANG: e.LANG || "C.UTF-8", TERM: "dumb" };
  const session = await engine.start({ config, settings: {}, model, instruction: null, workspace, shellEnv, log: () => {} });
  const { createInterface } = await import("node:readline");
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "") continue;
    let res;
    try {
      res = await session.invoke({ input: line, signal: new AbortController().signal, emit: () => {} });
    } catch (err) {
      res = { status: "failed", output: "", error: { message: String(err?.message ?? err) } };
    }
    process.stdout.write(JSON.stringify({ status: res.status, output: res.output }) + "\n");
  }
  await session.stop?.();
}
