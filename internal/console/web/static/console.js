// The Fabric console's page logic: sign-in from the URL fragment, the
// periodic refresh of server-rendered sections, the live turn view of an
// agent (server-sent events, resumed by cursor), key operations and the
// chat panel. Plain JS, no dependency; served from the binary.
(() => {
  'use strict';
  const $ = (s, r = document) => r.querySelector(s);
  const $$ = (s, r = document) => Array.from(r.querySelectorAll(s));
  const page = document.body.dataset.page;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const short = (s) => (s && s.length > 24 ? s.slice(0, 24) + '…' : s || '');

  // --- sign-in ---------------------------------------------------------
  async function signIn() {
    const msg = $('#signin-msg');
    const m = /(?:^|&)token=([^&]+)/.exec(location.hash.slice(1));
    if (!m) {
      msg.textContent = 'Open the address that fabric deploy console prints: it signs this browser in.';
      return;
    }
    const token = decodeURIComponent(m[1]);
    // The token leaves the address bar and the history at once.
    history.replaceState(null, '', location.pathname + location.search);
    const r = await fetch('/session', { method: 'POST', headers: { Authorization: 'Bearer ' + token }, credentials: 'same-origin' });
    if (r.status === 204) {
      location.replace(location.pathname + location.search);
      return;
    }
    const body = await r.json().catch(() => ({}));
    msg.textContent = 'Sign-in refused: ' + ((body.error && body.error.message) || 'HTTP ' + r.status);
  }

  // --- refresh of server-rendered sections -----------------------------
  function refreshState(text, cls) {
    const s = $('#refresh-state');
    if (s) {
      s.textContent = text;
      s.className = 'refresh ' + (cls || '');
    }
  }
  function startRefresh(ms) {
    let busy = false;
    const tick = async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const r = await fetch(location.pathname, { credentials: 'same-origin' });
        if (r.status === 401) {
          refreshState('signed out: open the address fabric deploy console prints', 'bad');
          return;
        }
        const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
        for (const cur of $$('[data-refresh]')) {
          if (cur.querySelector('.confirming')) continue; // an operator is confirming in it
          const next = cur.id && doc.getElementById(cur.id);
          if (next) cur.replaceWith(document.importNode(next, true));
        }
        refreshState('updated ' + new Date().toLocaleTimeString());
      } catch (e) {
        refreshState('the console is unreachable (' + e.message + ')', 'bad');
      } finally {
        busy = false;
      }
    };
    setInterval(tick, ms);
  }

  // --- live turns of an agent ------------------------------------------
  function agentLive() {
    const panel = $('#live');
    const agent = panel.dataset.agent;
    const view = $('#turn-view');
    const list = $('#records');
    const state = $('#stream-state');
    const toggle = $('#stream-toggle');
    let es = null;
    let cursor = '';
    let paused = false;
    let turn = null; // {box, text, reasoning, tools: Map}
    let count = 0;
    const setState = (text, cls) => {
      state.textContent = text;
      state.className = 'badge ' + cls;
      panel.dataset.stream = text;
    };
    const turnFor = (rec) => {
      if (turn && turn.id === rec.invocation_id) return turn;
      const empty = $('.empty', view);
      if (empty) empty.remove();
      const box = el('article', 'turn');
      box.dataset.invocation = rec.invocation_id;
      box.dataset.status = 'running';
      const head = el('header');
      head.append(el('span', 'badge warn', 'running'), el('code', '', short(rec.invocation_id)), el('span', '', 'runtime ' + short(rec.runtime_id)));
      box.append(head);
      view.prepend(box);
      while (view.children.length > 5) view.lastElementChild.remove();
      turn = { id: rec.invocation_id, box, head, text: null, reasoning: null, tools: new Map() };
      return turn;
    };
    const textRun = (t, kind) => {
      // A run of text or reasoning continues until something else comes.
      const last = t.box.lastElementChild;
      if (last && last.classList.contains(kind)) return last;
      const r = el('div', kind);
      t.box.append(r);
      return r;
    };
    const meta = (rec, k) => {
      const v = rec.metadata && rec.metadata[k];
      if (v === undefined || v === null) return '';
      return typeof v === 'string' ? v : JSON.stringify(v);
    };
    const render = (rec) => {
      const t = turnFor(rec);
      switch (rec.kind) {
        case 'output_delta':
          textRun(t, 'text').textContent += rec.message;
          break;
        case 'reasoning_delta':
          textRun(t, 'reasoning').textContent += rec.message;
          break;
        case 'tool_call': {
          const name = meta(rec, 'tool') || rec.message;
          const box = el('div', 'tool');
          box.dataset.tool = name;
          box.dataset.status = 'running';
          const args = meta(rec, 'arguments') || meta(rec, 'command');
          box.append(el('div', 'name', '⚙ ' + name + ' · running'), el('div', 'args', args));
          t.box.append(box);
          t.tools.set(meta(rec, 'item_id') || '#' + name, box);
          break;
        }
        case 'tool_result': {
          const key = meta(rec, 'item_id') || '#' + meta(rec, 'tool');
          const box = t.tools.get(key);
          if (!box) break;
          const err = meta(rec, 'error');
          box.dataset.status = err ? 'failed' : 'completed';
          if (err) box.classList.add('failed');
          box.firstElementChild.textContent = '⚙ ' + box.dataset.tool + ' · ' + box.dataset.status;
          box.append(el('div', 'out', err || meta(rec, 'output') || rec.message));
          break;
        }
        case 'invocation_start':
        case 'invocation_end':
        case 'runtime_start':
          break;
        default:
          if (['warning', 'model_retry', 'file_change', 'artifact'].includes(rec.kind)) {
            t.box.append(el('div', 'note', rec.kind + ': ' + rec.message));
          }
      }
    };
    const onRecord = (rec, id) => {
      cursor = id;
      $('#stream-cursor').textContent = id;
      if (rec.dropped) {
        const gap = el('li', 'gap', '… ' + rec.dropped + ' record(s) were gone before this watcher came back');
        gap.dataset.dropped = rec.dropped;
        list.append(gap);
      }
      const li = el('li');
      li.dataset.seq = rec.seq;
      li.dataset.runtime = rec.runtime_id;
      li.dataset.invocation = rec.invocation_id;
      li.dataset.kind = rec.kind;
      li.append(el('span', 'seq', rec.seq), el('span', 'k', rec.kind), el('span', 'm', rec.message));
      list.append(li);
      while (list.children.length > 3000) list.firstElementChild.remove();
      $('#record-count').textContent = ++count;
      render(rec);
    };
    const connect = () => {
      const url = '/api/agents/' + encodeURIComponent(agent) + '/events' + (cursor ? '?after=' + encodeURIComponent(cursor) : '');
      es = new EventSource(url);
      setState('connecting', 'warn');
      es.onopen = () => setState('live', 'ok');
      es.onerror = () => setState(es.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting', 'bad');
      es.addEventListener('record', (e) => {
        setState('live', 'ok');
        onRecord(JSON.parse(e.data), e.lastEventId);
      });
      es.addEventListener('turn_end', (e) => {
        const d = JSON.parse(e.data);
        if (turn && turn.id === d.invocation_id) {
          turn.box.dataset.status = d.status;
          const b = turn.head.firstElementChild;
          b.textContent = d.status + (d.error_code ? ': ' + d.error_code : '');
          b.className = 'badge ' + (d.status === 'succeeded' ? 'ok' : 'bad');
        }
      });
      es.addEventListener('runtime', (e) => {
        const d = JSON.parse(e.data);
        if (d.previous) {
          const n = el('p', 'note', 'The agent has a new runtime ' + d.runtime_id + ' (the previous one, ' + d.previous + ', ended).');
          view.prepend(n);
        }
        turn = null;
      });
      es.addEventListener('waiting', () => setState('waiting for a runtime', 'warn'));
    };
    toggle.addEventListener('click', () => {
      paused = !paused;
      if (paused) {
        es.close();
        setState('paused', 'warn');
        toggle.textContent = 'Resume';
      } else {
        toggle.textContent = 'Pause';
        connect(); // from the last record received: nothing missed, nothing twice
      }
    });
    connect();
  }

  // --- access: key operations and chat ---------------------------------
  const keys = new Map(); // key_id -> {token, agent, integration}: this page's memory only
  async function accessOp(body) {
    const r = await fetch('/api/access', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const out = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((out.error && (out.error.code + ': ' + out.error.message)) || 'HTTP ' + r.status);
    return out;
  }
  function showSecret(k, agent, integration) {
    keys.set(k.key_id, { token: k.token, agent, integration });
    const s = $('#secret');
    $('#secret-key-id').textContent = k.key_id;
    $('#secret-token').textContent = k.token;
    s.hidden = false;
    s.dataset.keyId = k.key_id;
    fillKeys();
    s.scrollIntoView({ block: 'nearest' });
  }
  function fillKeys(select) {
    const sel = $('#chat-form select[name=key]');
    if (!sel) return;
    const cur = select || sel.value;
    sel.replaceChildren(new Option('paste a key…', ''));
    for (const [id, k] of keys) sel.append(new Option(id + ' (' + k.agent + ')', id));
    sel.value = keys.has(cur) ? cur : '';
    sel.dispatchEvent(new Event('change'));
  }
  function notice(text, cls) {
    const n = el('p', 'notice ' + (cls || ''), text);
    const main = $('main');
    main.insertBefore(n, main.children[1] || null);
    setTimeout(() => n.remove(), 8000);
  }
  async function runOp(btn) {
    const op = btn.dataset.op;
    try {
      if (op === 'grant') {
        const f = btn.closest('form');
        const agent = f.agent.value;
        const k = await accessOp({ op, integration: f.dataset.integration, agent, client: f.client.value, ttl_seconds: Number(f.ttl_hours.value) * 3600 });
        showSecret(k, agent, f.dataset.integration);
      } else if (op === 'rotate') {
        const row = btn.closest('tr');
        const k = await accessOp({ op, integration: btn.dataset.integration, key_id: btn.dataset.keyId });
        keys.delete(btn.dataset.keyId);
        showSecret(k, row.dataset.agent, btn.dataset.integration);
      } else if (op === 'revoke') {
        await accessOp({ op, integration: btn.dataset.integration, key_id: btn.dataset.keyId });
        notice('Key ' + btn.dataset.keyId + ' revoked: the gateway refuses it from now on.', 'ok');
        const row = btn.closest('tr');
        if (row) {
          row.dataset.state = 'revoked';
          row.querySelector('td.actions').replaceChildren();
          const b = row.querySelector('.badge');
          b.textContent = 'revoked';
          b.className = 'badge bad';
        }
      }
    } catch (e) {
      notice(op + ' failed: ' + e.message, 'bad');
    }
  }
  function access() {
    // Every change asks for a second click: the first arms the button.
    document.addEventListener('click', (e) => {
      const btn = e.target.closest('button.confirm-first');
      if (btn) {
        if (!btn.classList.contains('confirming')) {
          for (const other of $$('button.confirming')) disarm(other);
          btn.classList.add('confirming');
          btn.dataset.label = btn.textContent;
          btn.textContent = 'Confirm ' + btn.dataset.label.toLowerCase() + '?';
          btn.timer = setTimeout(() => disarm(btn), 6000);
          return;
        }
        disarm(btn);
        runOp(btn);
        return;
      }
      const use = e.target.closest('button.use-grant');
      if (use) {
        const f = $('#chat-form');
        f.integration.value = use.dataset.integration;
        f.agent.value = use.dataset.agent;
        fillKeys(keys.has(use.dataset.keyId) ? use.dataset.keyId : '');
        if (!keys.has(use.dataset.keyId)) f.token.focus();
        f.scrollIntoView({ block: 'nearest' });
      }
    });
    const disarm = (btn) => {
      clearTimeout(btn.timer);
      btn.classList.remove('confirming');
      if (btn.dataset.label) btn.textContent = btn.dataset.label;
    };
    const s = $('#secret');
    $('#secret-dismiss').addEventListener('click', () => {
      s.hidden = true;
      $('#secret-token').textContent = '';
    });
    $('#secret-copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('#secret-token').textContent));
    $('#secret-use').addEventListener('click', () => {
      fillKeys(s.dataset.keyId);
      s.hidden = true;
      $('#secret-token').textContent = '';
      $('#chat-form textarea').focus();
    });
    chat();
  }

  // The chat panel: POST /api/chat relays one Responses turn through the
  // gateway with the picked key; its server-sent events render as they come.
  function chat() {
    const f = $('#chat-form');
    if (!f) return;
    const log = $('#chat-log');
    let previous = '';
    f.key.addEventListener('change', () => {
      const k = keys.get(f.key.value);
      f.token.closest('label').hidden = !!k;
      if (k) {
        f.integration.value = k.integration;
        f.agent.value = k.agent;
      }
    });
    $('#chat-new').addEventListener('click', () => {
      previous = '';
      log.replaceChildren();
    });
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      const input = f.input.value.trim();
      const k = keys.get(f.key.value);
      const token = k ? k.token : f.token.value.trim();
      if (!input || !token) return;
      f.input.value = '';
      const user = el('div', 'msg user');
      user.append(el('div', 'bubble', input));
      const reply = el('div', 'msg agent');
      reply.dataset.status = 'sent';
      const bubble = el('div', 'bubble');
      const metaLine = el('div', 'meta', f.agent.value + ' · sending…');
      reply.append(bubble, metaLine);
      log.append(user, reply);
      $('#chat-send').disabled = true;
      try {
        const r = await fetch('/api/chat', {
          method: 'POST', credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', 'X-Fabric-Access-Key': token },
          body: JSON.stringify({ integration: f.integration.value, agent: f.agent.value, input, previous_response_id: previous || undefined }),
        });
        if (!r.ok) {
          const body = await r.json().catch(() => ({}));
          const err = body.error || {};
          reply.classList.add('refused');
          reply.dataset.status = 'refused';
          reply.dataset.httpStatus = r.status;
          bubble.textContent = 'Refused by the gateway (HTTP ' + r.status + '): ' + (err.code || err.type || '') + (err.message ? ' — ' + err.message : '');
          metaLine.textContent = f.agent.value;
          return;
        }
        await readEvents(r.body, (ev) => {
          const id = onChatEvent(ev, reply, bubble, metaLine);
          if (id) previous = id;
        });
      } catch (err) {
        reply.classList.add('refused');
        reply.dataset.status = 'error';
        bubble.textContent = 'The console could not reach the gateway: ' + err.message;
      } finally {
        $('#chat-send').disabled = false;
        log.scrollTop = log.scrollHeight;
      }
    });
  }
  async function readEvents(body, on) {
    const reader = body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (data && data !== '[DONE]') {
          try { on(JSON.parse(data)); } catch (_) { /* not JSON: a comment or keep-alive */ }
        }
      }
    }
  }
  function onChatEvent(ev, reply, bubble, metaLine) {
    const run = (cls) => {
      const last = bubble.lastElementChild;
      if (last && last.classList.contains(cls)) return last;
      const r = el('div', cls);
      bubble.append(r);
      return r;
    };
    switch (ev.type) {
      case 'response.created':
      case 'response.in_progress':
        reply.dataset.status = ev.response.status;
        reply.dataset.responseId = ev.response.id;
        metaLine.textContent = ev.response.model + ' · ' + ev.response.status;
        break;
      case 'response.output_text.delta':
        run('text').textContent += ev.delta;
        break;
      case 'response.reasoning_summary_text.delta':
        run('reasoning').textContent += ev.delta;
        break;
      case 'response.output_item.added':
        if (ev.item.type === 'mcp_call') {
          const t = el('div', 'tool');
          t.dataset.itemId = ev.item.id;
          t.dataset.tool = ev.item.name;
          t.append(el('div', 'name', '⚙ ' + ev.item.name + ' · running'), el('div', 'args'));
          bubble.append(t);
        }
        break;
      case 'response.mcp_call_arguments.done': {
        const t = bubble.querySelector('[data-item-id="' + ev.item_id + '"] .args');
        if (t) t.textContent = ev.arguments;
        break;
      }
      case 'response.output_item.done':
        if (ev.item.type === 'mcp_call') {
          const t = bubble.querySelector('[data-item-id="' + ev.item.id + '"]');
          if (t) {
            t.dataset.status = ev.item.status;
            if (ev.item.status === 'failed') t.classList.add('failed');
            t.firstElementChild.textContent = '⚙ ' + ev.item.name + ' · ' + ev.item.status;
            t.append(el('div', 'out', ev.item.error || ev.item.output || ''));
          }
        } else if (typeof ev.item.type === 'string' && ev.item.type.startsWith('fabric:')) {
          bubble.append(el('div', 'note', ev.item.type.slice(7) + ': ' + ev.item.message));
        }
        break;
      case 'response.completed':
      case 'response.failed':
      case 'response.incomplete':
      case 'response.cancelled': {
        const r = ev.response;
        reply.dataset.status = r.status;
        const u = r.usage ? ' · ' + r.usage.input_tokens + ' in / ' + r.usage.output_tokens + ' out' : '';
        metaLine.textContent = r.model + ' · ' + r.status + u + (r.error ? ' · ' + r.error.code + ': ' + r.error.message : '');
        if (r.status !== 'completed') reply.classList.add('refused');
        return r.status === 'completed' ? r.id : '';
      }
      case 'error':
        reply.classList.add('refused');
        reply.dataset.status = 'error';
        bubble.append(el('div', 'note', (ev.code || 'error') + ': ' + (ev.message || '')));
        break;
    }
    return '';
  }

  // --- start -------------------------------------------------------------
  document.addEventListener('DOMContentLoaded', () => {
    if (page === 'signin') {
      // The address may also arrive on a sign-in page already open.
      window.addEventListener('hashchange', signIn);
      signIn();
      return;
    }
    const out = $('#sign-out');
    if (out) {
      out.addEventListener('click', async () => {
        await fetch('/session/end', { method: 'POST', credentials: 'same-origin' });
        location.reload();
      });
    }
    if (page === 'agent') agentLive();
    if (page === 'access') access();
    startRefresh(2000);
  });
})();
