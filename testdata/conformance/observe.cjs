// observe.cjs is preloaded (node -r) into the MCP conformance suite by
// mcptape's tests (internal/conformancetest). It wraps globalThis.fetch and
// appends to the file named by $MCPTAPE_OBSERVE one JSON line per JSON-RPC
// request or response that crosses its fetch calls: requests as
// {"dir":D,"method":M,"id":ID}, responses as {"dir":D,"id":ID}, where D is
// "c2s" for what the suite sends and "s2c" for what it reads, and ID is the
// id as JSON text. So a run straight against a server tells which requests
// were answered there, without putting anything on the wire between them.
//
// Response bodies are passed on chunk by chunk as the suite reads them;
// cancelling the body cancels the real one, so the suite's connections
// open and close exactly as they would without this file. The suite's
// other client, undici's request (used where it must set Host), is wrapped
// too: what its response body's text() or json() reads is looked at.
'use strict';

const fs = require('node:fs');

const out = process.env.MCPTAPE_OBSERVE;

function log(rec) {
  fs.appendFileSync(out, JSON.stringify(rec) + '\n');
}

// each calls f on every message of a JSON-RPC payload (a batch or one).
function each(text, f) {
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return;
  }
  for (const m of Array.isArray(v) ? v : [v]) {
    if (m && typeof m === 'object' && m.id !== undefined && m.id !== null) f(m);
  }
}

// note logs the requests and responses of a JSON-RPC payload.
function note(dir, text) {
  each(text, (m) => {
    if (typeof m.method === 'string') log({ dir, method: m.method, id: JSON.stringify(m.id) });
    else if ('result' in m || 'error' in m) log({ dir, id: JSON.stringify(m.id) });
  });
}

function sent(body) {
  if (typeof body === 'string') note('c2s', body);
}

function received(text) {
  note('s2c', text);
}

// sseParser returns a function fed the body text in pieces; it reports the
// data of every complete event.
function sseParser() {
  let pending = '';
  let data = [];
  return (piece, end) => {
    pending += piece;
    const lines = pending.split(/\r\n|\r|\n/);
    pending = end ? '' : lines.pop();
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) received(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    if (end && data.length > 0) received(data.join('\n'));
  };
}

// parserFor returns the parser for a body of content type ctype.
function parserFor(ctype) {
  return (ctype || '').startsWith('text/event-stream') ? sseParser() : jsonParser();
}

function jsonParser() {
  let all = '';
  return (piece, end) => {
    all += piece;
    if (end) received(all);
  };
}

if (out && typeof globalThis.fetch === 'function') {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async function observedFetch(input, init) {
    sent(init && init.body);
    const res = await realFetch(input, init);
    if (!res.body) return res;
    const feed = parserFor(res.headers.get('content-type'));
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(ctrl) {
        const { done, value } = await reader.read();
        if (done) {
          feed(decoder.decode(), true);
          ctrl.close();
          return;
        }
        feed(decoder.decode(value, { stream: true }), false);
        ctrl.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    const wrapped = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(wrapped, 'url', { value: res.url });
    return wrapped;
  };
}

if (out) {
  const undici = require('undici'); // the suite's own copy, found from this directory
  const realRequest = undici.request;
  undici.request = async function observedRequest(url, opts) {
    sent(opts && opts.body);
    const res = await realRequest.call(this, url, opts);
    const body = res.body;
    if (!body || typeof body.text !== 'function') return res;
    const text = body.text.bind(body);
    const read = async () => {
      const t = await text();
      parserFor(res.headers['content-type'])(t, true);
      return t;
    };
    body.text = read;
    body.json = async () => JSON.parse(await read());
    return res;
  };
}
