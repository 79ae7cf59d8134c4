// Reconnect: responses.retrieve(id, {stream: true, starting_after: N})
// gives the events after N, following the turn live if it still runs
// (helper.mjs resumes through the responses.stream() helper).
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
});
