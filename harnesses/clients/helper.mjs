// The responses.stream() helper: its accumulator throws on an event type it
// does not know, an item without id, skipped indices or a mismatched
// item_id, so a clean finalResponse() proves the gateway's stream is
// standard. With FABRIC_RESPONSE_ID (and FABRIC_STARTING_AFTER) it
// resumes that response instead: the helper asks for a full replay and
// filters on the client.
import { client, emit, env, input, model, run } from './lib.mjs';

run(async () => {
  const id = env('FABRIC_RESPONSE_ID', '');
  const stream = id
    ? client().responses.stream({ response_id: id, starting_after: Number(env('FABRIC_STARTING_AFTER', '-1')) })
    : client().responses.stream({ model: model(), input: input() });
  const types = [];
  for await (const ev of stream) {
    if (ev.type === 'response.created') emit({ kind: 'created', id: ev.response.id });
    types.push(ev.type);
  }
  const final = await stream.finalResponse();
  emit({ kind: 'final', id: final.id, status: final.status, text: final.output_text, types, usage: final.usage });
});
