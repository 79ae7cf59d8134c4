// responses.create({stream: true}) consumed to the end, or, with
// FABRIC_ABORT_AFTER=N, dropped right after the event with sequence
// number N (a client that disconnects without cancelling).
import { client, emit, event, input, model, run, env } from './lib.mjs';

run(async () => {
  const abortAfter = Number(env('FABRIC_ABORT_AFTER', '-1'));
  const stream = await client().responses.create({ model: model(), input: input(), stream: true });
  let id, text = '';
  for await (const ev of stream) {
    emit(event(ev));
    if (ev.type === 'response.created') id = ev.response.id;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (abortAfter >= 0 && ev.sequence_number === abortAfter) {
      stream.controller.abort();
      emit({ kind: 'aborted', id, seq: ev.sequence_number, text });
      return;
    }
  }
  emit({ kind: 'end', id, text });
});
