// Reconnect: responses.retrieve(id, {stream: true, starting_after: N})
// gives the events after N (following the turn live if it still runs),
// then the helper's responses.stream({response_id, starting_after: N})
// (which asks for a full replay and filters on the client) gives the same
// final response.
import { client, emit, event, env, run } from './lib.mjs';

run(async () => {
  const id = env('FABRIC_RESPONSE_ID');
  const after = Number(env('FABRIC_STARTING_AFTER'));
  const c = client();
  const stream = await c.responses.retrieve(id, { stream: true, starting_after: after });
  let text = '';
  for await (const ev of stream) {
    emit(event(ev));
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  emit({ kind: 'end', id, text });
  const helper = c.responses.stream({ response_id: id, starting_after: after });
  const seqs = [];
  for await (const ev of helper) seqs.push(ev.sequence_number);
  const final = await helper.finalResponse();
  emit({ kind: 'helper', id: final.id, status: final.status, text: final.output_text, seqs });
});
