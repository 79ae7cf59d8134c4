// Interrupt: responses.cancel(id) while the turn streams; the stream ends
// with response.incomplete (status cancelled); a second cancel returns the
// same object, and so does a plain retrieve.
import { client, emit, event, input, model, run } from './lib.mjs';

run(async () => {
  const c = client();
  const stream = await c.responses.create({ model: model(), input: input(), stream: true });
  let id, cancelling, text = '';
  for await (const ev of stream) {
    emit(event(ev));
    if (ev.type === 'response.created') id = ev.response.id;
    if (ev.type === 'response.output_text.delta') {
      text += ev.delta;
      cancelling ??= c.responses.cancel(id);
    }
  }
  if (!cancelling) throw new Error('the turn ended before any text: nothing was cancelled');
  const first = await cancelling;
  const second = await c.responses.cancel(id);
  const got = await c.responses.retrieve(id);
  emit({
    kind: 'cancel', id, text,
    first: { id: first.id, status: first.status },
    same: JSON.stringify(first) === JSON.stringify(second),
    retrieved: got.status,
  });
});
