// The engine of the Fabric adapter host for Strands Agents TS (host.mjs). One
// runtime is one in-process Strands Agent: its OpenAI model provider
// pointed at the configured endpoint, and a `bash` tool of this host (not
// Strands' vended one, which inherits the host's whole environment and
// working directory) that runs each command with `bash -c` in the
// workspace, with the kit's credential-free environment, and ends it when
// the turn is cancelled. History is the agent's own message list, kept
// across turns. A cancelled turn calls agent.cancel(), which aborts the
// model request; the kit kills the shell commands.
import { spawn } from "node:child_process";
import { Agent, tool } from "@strands-agents/sdk";
import { OpenAIModel } from "@strands-agents/sdk/models/openai";
import { z } from "zod";
import { cut, HostError } from "fabric-node-host";

const code = "strands";
const maxOutput = 100_000;

function shellTool(workspace, env, timeoutSeconds) {
  return tool({
    name: "bash",
    description: "Run a shell command with bash -c in the workspace and return its output and exit code.",
    inputSchema: z.object({ command: z.string().describe("The command line to run") }),
    callback: (input, context) =>
      new Promise((resolve) => {
        const child = spawn("bash", ["-c", input.command], { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
        let out = "";
        const add = (b) => {
          if (out.length < maxOutput) out += b.toString("utf8");
        };
        child.stdout.on("data", add);
        child.stderr.on("data", add);
        const killGroup = () => {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // already gone
          }
        };
        const timer = setTimeout(killGroup, timeoutSeconds * 1000);
        const signal = context?.cancelSignal;
        signal?.addEventListener("abort", killGroup, { once: true });
        child.on("error", (e) => resolve({ output: cut(out), error: e.message, exit_code: -1 }));
        child.on("close", (codeOrNull, sig) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", killGroup);
          resolve({ output: cut(out.slice(0, maxOutput)), exit_code: codeOrNull ?? -1, ...(sig ? { signal: sig } : {}) });
        });
      }),
  });
}

function text(message) {
  return (message?.content ?? []).filter((b) => b.type === "textBlock").map((b) => b.text).join("");
}

export const engine = {
  name: "strands",
  codePrefix: code,
  async start({ settings, model, instruction, workspace, shellEnv }) {
    const api = settings.api ?? "chat";
    if (api !== "chat" && api !== "responses") throw new HostError(`${code}_invalid_settings`, `settings.api must be chat or responses, not ${api}`);
    const llm = new OpenAIModel({
      api,
      modelId: model.model,
      apiKey: model.key,
      clientConfig: { baseURL: model.baseURL, maxRetries: settings.max_retries ?? 0 },
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    });
    const agent = new Agent({
      model: llm,
      tools: [shellTool(workspace, shellEnv, settings.shell_timeout_seconds ?? 120)],
      printer: false,
      retryStrategy: null,
      ...(instruction ? { systemPrompt: instruction.content } : {}),
    });
    return {
      async invoke({ input, signal, emit }) {
        const onAbort = () => agent.cancel();
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          const gen = agent.stream(input);
          let step = await gen.next();
          for (; !step.done; step = await gen.next()) {
            const ev = step.value;
            switch (ev?.type) {
              case "modelStreamUpdateEvent": {
                const e = ev.event;
                if (e?.type === "modelContentBlockDeltaEvent") {
                  if (e.delta?.type === "textDelta" && e.delta.text) emit("output_delta", e.delta.text);
                  else if (e.delta?.type === "reasoningContentDelta" && e.delta.text) emit("reasoning_delta", e.delta.text);
                }
                break;
              }
              case "beforeToolCallEvent":
                emit("tool_call", ev.toolUse.name, { tool_name: ev.toolUse.name, call_id: ev.toolUse.toolUseId ?? "", arguments: cut(JSON.stringify(ev.toolUse.input ?? {})) });
                break;
              case "afterToolCallEvent": {
                const r = ev.result;
                const body = (r?.content ?? []).map((c) => (c.type === "textBlock" ? c.text : c.type === "jsonBlock" ? JSON.stringify(c.json) : "")).join("");
                emit("tool_result", ev.toolUse.name, { tool_name: ev.toolUse.name, call_id: ev.toolUse.toolUseId ?? "", is_error: r?.status === "error", output: cut(body) });
                break;
              }
            }
          }
          const result = step.value;
          if (result?.stopReason === "cancelled" || signal.aborted) return { status: "cancelled", output: "" };
          const res = { status: "succeeded", output: text(result?.lastMessage) };
          const u = result?.metrics?.accumulatedUsage;
          if (u && (u.inputTokens || u.outputTokens)) {
            res.usage = { input_tokens: u.inputTokens ?? 0, output_tokens: u.outputTokens ?? 0, total_tokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0) };
          }
          return res;
        } finally {
          signal.removeEventListener("abort", onAbort);
        }
      },
    };
  },
};

