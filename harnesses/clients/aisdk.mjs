// The Vercel AI SDK with its OpenAI provider: streamText and generateText
// over the Responses model, streamText over the chat model (generateText
// last: it reads the non-stream Response through the SDK's strict schema).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { emit, env, input, model, run } from './lib.mjs';

run(async () => {
  const provider = createOpenAI({ baseURL: env('FABRIC_GATEWAY_URL'), apiKey: env('FABRIC_GATEWAY_TOKEN') });
  const streamed = async (mode, m, prompt) => {
    const res = streamText({ model: m, prompt });
    const parts = [];
    for await (const p of res.fullStream) {
      parts.push(p.type);
      if (p.type === 'error') throw p.error;
    }
    emit({ kind: mode, text: await res.text, finish: await res.finishReason, usage: await res.usage, parts: [...new Set(parts)] });
  };
  await streamed('stream_responses', provider.responses(model()), input() + ' (streamText responses)');
  await streamed('stream_chat', provider.chat(model()), input() + ' (streamText chat)');
  const gen = await generateText({ model: provider.responses(model()), prompt: input() + ' (generateText responses)' });
  emit({ kind: 'generate_responses', text: gen.text, finish: gen.finishReason, usage: gen.usage, id: gen.response?.id });
});
