// Shared by the scenario scripts: the gateway comes from the environment
// (FABRIC_GATEWAY_URL ends in /v1, FABRIC_GATEWAY_TOKEN is a faba_ key),
// results go to stdout as one JSON object per line, which the Go test
// (internal/deploy/e2e_access_test.go) reads. Nothing here prints a token.
import OpenAI from 'openai';

export function env(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (fallback !== undefined) return fallback;
    throw new Error(`${name} is not set`);
  }
  return v;
}

export const model = () => env('FABRIC_MODEL');
export const input = () => env('FABRIC_INPUT');

export function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// recorder returns a fetch that records each request (method, path, the
// retry counter the SDK sends, the Idempotency-Key) and the status and
// x-should-retry it got, in posts.
export function recorder() {
  const posts = [];
  const recording = async (url, init = {}) => {
    const h = new Headers(init.headers);
    const rec = {
      method: init.method ?? 'GET',
      path: new URL(String(url)).pathname,
      retry_count: h.get('x-stainless-retry-count'),
      idempotency_key: h.get('idempotency-key'),
    };
    posts.push(rec);
    const res = await fetch(url, init);
    rec.status = res.status;
    rec.should_retry = res.headers.get('x-should-retry');
    return res;
  };
  return { posts, fetch: recording };
}

// The default recorder, which client() uses.
const standard = recorder();
export const posts = standard.posts;
export const countingFetch = standard.fetch;

export function client(opts = {}) {
  return new OpenAI({
    baseURL: env('FABRIC_GATEWAY_URL'),
    apiKey: env('FABRIC_GATEWAY_TOKEN'),
    fetch: countingFetch,
    ...opts,
  });
}

// event is what the test needs of one streamed event.
export function event(ev, kind = 'event') {
  const o = { kind, type: ev.type, seq: ev.sequence_number };
  if (ev.delta !== undefined) o.delta = ev.delta;
  if (ev.response) {
    o.id = ev.response.id;
    o.status = ev.response.status;
    if (ev.response.usage) o.usage = ev.response.usage;
    if (ev.response.error) o.code = ev.response.error.code;
  }
  return o;
}

// failure is what the test needs of an SDK error.
export function failure(err) {
  return {
    http_status: err?.status,
    code: err?.code ?? err?.error?.code,
    type: err?.type ?? err?.error?.type,
    name: err?.constructor?.name,
    message: String(err?.message ?? err),
    cause: err?.cause ? String(err.cause.message ?? err.cause).slice(0, 600) : undefined,
  };
}

// run runs the scenario; an uncaught failure is reported as a line and a
// non-zero exit.
export function run(fn) {
  fn().catch((err) => {
    emit({ kind: 'fatal', ...failure(err), stack: String(err?.stack ?? '') });
    process.exitCode = 1;
  });
}
