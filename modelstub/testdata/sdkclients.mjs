// Drives the model stub with the official JavaScript SDKs (openai,
// @anthropic-ai/sdk, @google/genai) the harnesses are built on. Run by
// TestOfficialSDKClients; argv[2] is the stub's URL, argv[3] the key.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import assert from 'node:assert/strict';

const [url, key] = process.argv.slice(2);
const oa = new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0 });
const an = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
const gg = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } });
const argvShell = { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] };
const strShell = { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command', 'description'] };
const CMD = 'echo STUB_TOOL_OK';
const ARGV = ['bash', '-lc', CMD];
const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('chat', async () => {
  const r = await oa.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(r.choices[0].message.content, 'Hello from the Fabric model stub.');
});
check('chat stream text', async () => {
  const s = oa.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'SLOW' }] });
  assert.equal(await s.finalContent(), 'one two three four five');
});
check('chat stream tool + usage', async () => {
  const s = oa.chat.completions.stream({ model: 'm', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'STUBTOOL' }], tools: [{ type: 'function', function: { name: 'shell', parameters: argvShell } }] });
  const fin = await s.finalChatCompletion();
  assert.equal(fin.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(JSON.parse(fin.choices[0].message.tool_calls[0].function.arguments), { command: ARGV });
  assert.ok(fin.usage.total_tokens > 0);
});
check('responses', async () => {
  assert.equal((await oa.responses.create({ model: 'm', input: 'hi' })).output_text, 'Hello from the Fabric model stub.');
});
check('responses stream tool', async () => {
  const s = oa.responses.stream({ model: 'm', input: 'STUBTOOL', tools: [{ type: 'function', name: 'exec_command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } }] });
  const fin = await s.finalResponse();
  const call = fin.output.find((o) => o.type === 'function_call');
  assert.equal(call.name, 'exec_command');
  assert.deepEqual(JSON.parse(call.arguments), { cmd: CMD });
  assert.equal(fin.usage.input_tokens_details.cached_tokens, 0);
  assert.equal(fin.usage.output_tokens_details.reasoning_tokens, 0);
});
check('responses stream after tool result', async () => {
  const events = [];
  const s = await oa.responses.create({ model: 'm', stream: true, input: [{ role: 'user', content: 'STUBTOOL' }, { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'STUB_TOOL_OK' }], tools: [{ type: 'function', name: 'exec_command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }] });
  let text = '';
  for await (const e of s) { events.push(e.type); if (e.type === 'response.output_text.delta') text += e.delta; }
  assert.equal(text, 'Hello from the Fabric model stub.');
  assert.equal(events.at(-1), 'response.completed');
});
check('messages', async () => {
  const r = await an.messages.create({ model: 'c', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(r.content[0].text, 'Hello from the Fabric model stub.');
});
check('messages stream tool', async () => {
  const s = an.messages.stream({ model: 'c', max_tokens: 100, messages: [{ role: 'user', content: 'STUBTOOL' }], tools: [{ name: 'Bash', input_schema: strShell }] });
  const fin = await s.finalMessage();
  assert.equal(fin.stop_reason, 'tool_use');
  const tu = fin.content.find((c) => c.type === 'tool_use');
  assert.equal(tu.input.command, CMD);
  assert.equal(typeof tu.input.description, 'string');
});
check('beta messages stream text', async () => {
  const s = an.beta.messages.stream({ model: 'c', max_tokens: 100, messages: [{ role: 'user', content: 'SLOW' }] });
  assert.equal((await s.finalMessage()).content[0].text, 'one two three four five');
});
check('count_tokens', async () => {
  const r = await an.messages.countTokens({ model: 'c', messages: [{ role: 'user', content: 'hi' }] });
  assert.ok(r.input_tokens > 0);
});
check('models', async () => {
  assert.ok((await oa.models.list()).data.some((m) => m.id === 'stub-model'));
  assert.ok((await an.models.list()).data.some((m) => m.id === 'stub-model'));
});
check('429 anthropic', async () => {
  await assert.rejects(an.messages.create({ model: 'c', max_tokens: 10, messages: [{ role: 'user', content: 'RATE' }] }),
    (e) => e.status === 429 && e.error.error.type === 'rate_limit_error' && e.headers.get('retry-after') === '1');
});
check('429 openai', async () => {
  await assert.rejects(oa.responses.create({ model: 'm', input: 'RATE' }), (e) => e.status === 429 && e.code === 'rate_limit_exceeded');
});
check('gemini', async () => {
  assert.equal((await gg.models.generateContent({ model: 'gemini-2.5-pro', contents: 'hi' })).text, 'Hello from the Fabric model stub.');
});
check('gemini stream text', async () => {
  let text = '';
  for await (const ch of await gg.models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'SLOW' })) text += ch.text ?? '';
  assert.equal(text, 'one two three four five');
});
check('gemini stream tool', async () => {
  const calls = [];
  for await (const ch of await gg.models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'STUBTOOL', config: { tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' }, is_background: { type: 'boolean' } }, required: ['command', 'is_background'] } }] }] } })) calls.push(...(ch.functionCalls ?? []));
  assert.deepEqual(calls.map((c) => [c.name, c.args]), [['run_shell_command', { command: CMD, is_background: false }]]);
});
check('gemini countTokens', async () => {
  assert.ok((await gg.models.countTokens({ model: 'gemini-2.5-pro', contents: 'hi' })).totalTokens > 0);
});
check('gemini router side request', async () => {
  const r = await gg.models.generateContent({ model: 'gemini-2.5-flash-lite', contents: 'route', config: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { reasoning: { type: 'STRING' }, model_choice: { type: 'STRING', enum: ['flash', 'pro'] } }, required: ['reasoning', 'model_choice'] } } });
  assert.equal(JSON.parse(r.text).model_choice, 'flash');
});
check('gemini 429', async () => {
  await assert.rejects(gg.models.generateContent({ model: 'gemini-2.5-pro', contents: 'RATE' }), /RESOURCE_EXHAUSTED/);
});

let failed = 0;
for (const [name, fn] of checks) {
  try { await fn(); console.log('ok', name); } catch (e) { failed++; console.log('FAIL', name, e?.stack ?? e); }
}
process.exit(failed ? 1 : 0);
