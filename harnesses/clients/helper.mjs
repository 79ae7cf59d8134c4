// The responses.stream() helper: its accumulator throws on an event type it
// does not know, an item without id, skipped indices or a mismatched
// item_id, so a clean finalResponse() proves the gateway's stream is
// standard.
import { client, emit, input, model, run } from './lib.mjs';

run(async () => {
  const stream = client().responses.stream({ model: model(), input: input() });
  const types = [];
  for await (const ev of stream) types.push(ev.type);
  const final = await stream.finalResponse();
  emit({ kind: 'final', id: final.id, status: final.status, text: final.output_text, types, usage: final.usage });
});
