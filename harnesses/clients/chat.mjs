// Chat Completions: create({stream: true, stream_options: {include_usage:
// true}}), then the chat.completions.stream() helper's
// finalChatCompletion().
import { client, emit, input, model, run } from './lib.mjs';

run(async () => {
  const c = client();
  const stream = await c.chat.completions.create({
    model: model(),
    messages: [{ role: 'user', content: input() }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '', finish = null, usage = null, role = null;
  const ids = new Set();
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    ids.add(chunk.id);
    for (const ch of chunk.choices) {
      if (ch.delta?.role) role = ch.delta.role;
      if (ch.delta?.content) text += ch.delta.content;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  emit({ kind: 'chat', id: [...ids].join(','), text, finish, usage, role, chunks });
  const helper = c.chat.completions.stream({ model: model(), messages: [{ role: 'user', content: input() + ' (helper)' }] });
  const final = await helper.finalChatCompletion();
  emit({ kind: 'chat_helper', id: final.id, text: final.choices[0]?.message?.content, finish: final.choices[0]?.finish_reason });
});
