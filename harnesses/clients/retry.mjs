// An SDK auto-retry after a transport failure: the first POST
// /v1/responses reaches the gateway, which admits the turn (its
// response.created arrives), then the connection is cut and fetch fails as
// a dropped connection would; the SDK retries on its own
// (X-Stainless-Retry-Count: 1). With FABRIC_IDEMPOTENCY_KEY every attempt
// carries that key, else none does (the gateway's optional mode matches
// the Stainless retry to its turn).
import { client, countingFetch, emit, env, event, input, model, posts, run } from './lib.mjs';

run(async () => {
  let cut = false, firstId;
  const faulty = async (url, init = {}) => {
    if (cut || init.method !== 'POST' || !new URL(String(url)).pathname.endsWith('/responses')) {
      return countingFetch(url, init);
    }
    cut = true;
    const ac = new AbortController();
    const res = await countingFetch(url, { ...init, signal: ac.signal });
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    while (!buf.includes('"type":"response.created"')) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
    }
    firstId = buf.match(/"id":"(resp_[^"]+)"/)?.[1];
    ac.abort();
    throw new TypeError('fetch failed: connection cut by fault injection');
  };
  const key = env('FABRIC_IDEMPOTENCY_KEY', '');
  const c = client({ fetch: faulty });
  const stream = await c.responses.create(
    { model: model(), input: input(), stream: true },
    key ? { headers: { 'Idempotency-Key': key } } : {},
  );
  let id, text = '';
  for await (const ev of stream) {
    emit(event(ev));
    if (ev.type === 'response.created') id = ev.response.id;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
  }
  emit({ kind: 'end', id, first_id: firstId, text, posts });
});
