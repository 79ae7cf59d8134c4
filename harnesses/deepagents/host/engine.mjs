// The engine of the Fabric adapter host for LangChain Deep Agents JS (host.mjs).
// One runtime is one in-process deep agent: a LangChain OpenAI chat model
// pointed at the configured endpoint, a LocalShellBackend rooted at the
// workspace (the `execute` tool runs there, with the kit's credential-free
// environment; the file tools see the workspace as their root), and an
// in-memory checkpointer with one thread per runtime, which carries history
// across turns. A cancelled turn aborts the graph run (and with it the model
// request); the kit kills the shell commands.
import { randomUUID } from "node:crypto";
import { createDeepAgent, LocalShellBackend } from "deepagents";
import { ChatOpenAI } from "@langchain/openai";
import { MemorySaver } from "@langchain/langgraph";
import { cut, HostError } from "fabric-node-host";

const code = "deepagents";

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === "string" ? c : c?.type === "text" ? c.text ?? "" : "")).join("");
  return "";
}

export const engine = {
  name: "deepagents",
  codePrefix: code,
  async start({ settings, model, instruction, workspace, shellEnv }) {
    const api = settings.api ?? "chat";
    if (api !== "chat" && api !== "responses") throw new HostError(`${code}_invalid_settings`, `settings.api must be chat or responses, not ${api}`);
    const llm = new ChatOpenAI({
      model: model.model,
      apiKey: model.key,
      configuration: { baseURL: model.baseURL },
      streaming: true,
      streamUsage: true,
      useResponsesApi: api === "responses",
      maxRetries: settings.max_retries ?? 0,
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    });
    const backend = await LocalShellBackend.create({
      rootDir: workspace,
      virtualMode: true,
      inheritEnv: false,
      env: shellEnv,
      timeout: settings.shell_timeout_seconds ?? 120,
    });
    const agent = createDeepAgent({
      model: llm,
      backend,
      checkpointer: new MemorySaver(),
      ...(instruction ? { systemPrompt: instruction.content } : {}),
    });
    const thread = randomUUID();
    return {
      async invoke({ input, signal, emit }) {
        const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, seen: false };
        let last = "";
        const stream = await agent.stream(
          { messages: [{ role: "user", content: input }] },
          { configurable: { thread_id: thread }, streamMode: ["messages", "updates"], signal, recursionLimit: settings.recursion_limit ?? 100 },
        );
        for await (const [mode, chunk] of stream) {
          if (mode === "messages") {
            const [msg] = chunk;
            const type = msg?._getType?.() ?? msg?.type;
            if (type === "ai" || type === "AIMessageChunk") {
              const d = text(msg.content);
              if (d) emit("output_delta", d);
            }
            continue;
          }
          // updates: { node: { messages: [...] } } once a node finished.
          for (const update of Object.values(chunk ?? {})) {
            const msgs = Array.isArray(update?.messages) ? update.messages : update?.messages?.value ?? [];
            for (const m of Array.isArray(msgs) ? msgs : []) {
              const type = m?._getType?.() ?? m?.type;
              if (type === "ai") {
                last = text(m.content);
                const u = m.usage_metadata;
                if (u) {
                  usage.seen = true;
                  usage.input_tokens += u.input_tokens ?? 0;
                  usage.output_tokens += u.output_tokens ?? 0;
                  usage.total_tokens += u.total_tokens ?? 0;
                }
                for (const c of m.tool_calls ?? []) {
                  emit("tool_call", c.name, { tool_name: c.name, call_id: c.id ?? "", arguments: cut(JSON.stringify(c.args ?? {})) });
                }
              } else if (type === "tool") {
                emit("tool_result", m.name, { tool_name: m.name ?? "", call_id: m.tool_call_id ?? "", is_error: m.status === "error", output: cut(text(m.content)) });
              }
            }
          }
        }
        const res = { status: "succeeded", output: last };
        if (usage.seen) res.usage = { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, total_tokens: usage.total_tokens };
        return res;
      },
    };
  },
};

