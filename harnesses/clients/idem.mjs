// Exactly-once around one slow turn, whose Idempotency-Key is
// FABRIC_IDEMPOTENCY_KEY:
//   attach:  the same key and body during the turn attach to it (same id,
//            events from 0);
//   busy:    another message during the turn is 409 conversation_busy,
//            sent once (x-should-retry: false);
//   replay:  the same key and body after the turn replay it (same id,
//            Idempotent-Replayed), streamed or not;
//   reused:  the same key with another input is 422.
import { client, emit, env, event, failure, input, model, recorder, run } from './lib.mjs';

const collect = async (stream, kind) => {
  const evs = [];
  for await (const ev of stream) evs.push(event(ev, kind));
  return evs;
};

run(async () => {
  const c = client();
  const key = env('FABRIC_IDEMPOTENCY_KEY');
  const body = { model: model(), input: input(), stream: true };
  const opts = { headers: { 'Idempotency-Key': key } };
  const first = await c.responses.create(body, opts);
  const it = first[Symbol.asyncIterator]();
  const firstEvents = [];
  for (;;) {
    const { value, done } = await it.next();
    if (done) throw new Error('the turn ended before any text');
    firstEvents.push(event(value, 'first'));
    if (value.type === 'response.output_text.delta') break;
  }
  const attached = c.responses.create(body, opts).then((s) => collect(s, 'attach'));

  const busy = recorder();
  try {
    const r = await client({ fetch: busy.fetch }).responses.create({ model: model(), input: env('FABRIC_BUSY_INPUT') });
    emit({ kind: 'busy', unexpected: r.id, status: r.status, posts: busy.posts });
  } catch (err) {
    emit({ kind: 'busy', ...failure(err), posts: busy.posts });
  }

  for (;;) {
    const { value, done } = await it.next();
    if (done) break;
    firstEvents.push(event(value, 'first'));
  }
  const attachEvents = await attached;
  for (const e of [...firstEvents, ...attachEvents]) emit(e);

  const { data: replay, response } = await c.responses.create(body, opts).withResponse();
  const replayEvents = await collect(replay, 'replay');
  for (const e of replayEvents) emit(e);
  emit({ kind: 'replay_headers', replayed: response.headers.get('idempotent-replayed') });

  const { data: plain, response: plainRes } = await c.responses.create({ ...body, stream: false }, opts).withResponse();
  emit({ kind: 'replay_plain', id: plain.id, status: plain.status, text: plain.output_text, replayed: plainRes.headers.get('idempotent-replayed') });

  try {
    const r = await c.responses.create({ ...body, input: input() + ' (changed)' }, opts);
    emit({ kind: 'reused', unexpected: true, id: r.id });
  } catch (err) {
    emit({ kind: 'reused', ...failure(err) });
  }
});
