import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REFUSED_ANSWERS, type CapturedAnswer } from '../fixtures/refused-answers.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { logLines, type LogLine } from '../helpers/log-lines.js';
import { MODERN_ENVELOPE } from '../helpers/raw-clients.js';
import { waitFor } from '../helpers/wait-for.js';
import { fixtureServer } from '../helpers/workbench-process.js';

// A client retrying with a wrong token, a port scanner, a page probing localhost: refused requests come in floods. At
// the default level the log says the first refusal of each kind from each source with what to do, and counts the
// rest — one line per kind and window, and in the activity summary — so a flood stays visible without a line per
// request (README "Command line", Logs; "Serving over HTTP", Refused requests).

const TOKEN = 'refusals-test-token-0123456789abcdef';
const LIMIT = 2048;
const CONFIG = { toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } } };
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const PER_KIND = 50;

type Kind = { reason: string; status: number; send: (url: string) => Promise<Response> };
const post = (url: string, headers: Record<string, string>, body = PING): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
const KINDS: Kind[] = [
  { reason: 'token_invalid', status: 401, send: (url) => post(url, { authorization: 'Bearer not-the-token' }) },
  { reason: 'origin', status: 403, send: (url) => post(url, { authorization: `Bearer ${TOKEN}`, origin: 'https://probe.example' }) },
  { reason: 'too_large', status: 413, send: (url) => post(url, { authorization: `Bearer ${TOKEN}` }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(2 * LIMIT) } })) },
  { reason: 'unknown_session', status: 404, send: (url) => post(url, { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'no-such-session' }) },
];

/** The lines that tell of refused requests: one of its own, a count of more like it, or the summary's count. */
const refusalLines = (lines: LogLine[]): LogLine[] => lines.filter((l) => /^refused |more refused requests/.test(l.message));

async function sendAll(wb: HttpWorkbench, times: number): Promise<void> {
  for (const kind of KINDS) {
    for (let i = 0; i < times; i++) {
      const response = await kind.send(wb.url);
      await response.arrayBuffer();
      assert.equal(response.status, kind.status, `${kind.reason} #${i}`);
    }
  }
}

describe('serve --http: the log of refused requests', () => {
  it(`says ${KINDS.length * PER_KIND} refused requests of ${KINDS.length} kinds in a few lines at the default level, every one counted`, async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--log-format', 'json'], { WORKBENCH_TOKEN: TOKEN, WORKBENCH_MAX_MESSAGE_BYTES: String(LIMIT) });
    let stderr = '';
    try {
      await sendAll(wb, PER_KIND);
    } finally {
      await wb.stop();
      stderr = wb.stderr();
    }
    const lines = logLines(stderr);
    const refusals = refusalLines(lines);
    process.stdout.write(`# stderr lines for ${KINDS.length * PER_KIND} refused requests: ${lines.length} (${refusals.length} about refusals)\n`);
    assert.ok(refusals.length <= 3 * KINDS.length, `a few lines for ${KINDS.length * PER_KIND} refused requests, not one each (${refusals.length}):\n${stderr}`);
    assert.ok(lines.length <= 12 + 3 * KINDS.length, `stderr stays short (${lines.length} lines):\n${stderr}`);
    for (const kind of KINDS.filter((k) => k.reason !== 'unknown_session')) {
      // The first one is said as before: what was refused, from where, and what to do.
      const first = lines.filter((l) => l.fields.reason === kind.reason && l.message.startsWith('refused '));
      assert.ok(first.length >= 1, `the first ${kind.reason} refusal has a line of its own:\n${stderr}`);
      assert.equal(first[0]!.level, 'info');
      assert.equal(first[0]!.fields.http_status, kind.status);
      assert.match(first[0]!.message, /from 127\.0\.0\.1/);
      // The rest are counted: every refused request is in a line of its own or in a count, none twice.
      const more = lines.filter((l) => l.fields.event === 'requests_refused' && l.fields.reason === kind.reason);
      assert.ok(more.length >= 1, `a count of the other ${kind.reason} refusals:\n${stderr}`);
      assert.equal(first.length + more.reduce((n, l) => n + Number(l.fields.count), 0), PER_KIND, `${kind.reason}:\n${stderr}`);
      assert.match(more[0]!.message, /: 127\.0\.0\.1( \(token:[0-9a-f]{8}\))? ×\d+$/);
    }
    // The activity summary counts every refusal by kind, unknown session ids too (those are debug one by one: a client
    // whose session expired is told 404 and opens another, as the spec has it).
    const summary = lines.filter((l) => l.fields.event === 'activity');
    assert.ok(summary.length >= 1, stderr);
    for (const kind of KINDS) {
      assert.equal(summary.reduce((n, l) => n + Number(l.fields[`refused_${kind.reason}`] ?? 0), 0), PER_KIND, `${kind.reason} in the summary:\n${stderr}`);
    }
    assert.match(summary.at(-1)!.message, /refused requests: .*401 .*×50/);
  });

  it('says each window of a flood: a line of its own for the first, a count of the rest once the window ends', async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--log-format', 'json'], { WORKBENCH_TOKEN: TOKEN, WORKBENCH_LOG_SUMMARY_SECONDS: '1' });
    const said = (): LogLine[] => logLines(wb.stderr()).filter((l) => l.fields.reason === 'token_invalid');
    const accounted = (): number => said().reduce((n, l) => n + (l.fields.event === 'requests_refused' ? Number(l.fields.count) : 1), 0);
    try {
      for (let i = 0; i < 5; i++) await (await KINDS[0]!.send(wb.url)).arrayBuffer();
      // Said while the workbench runs, not only at shutdown.
      await waitFor(() => accounted() === 5, { timeoutMs: 30_000, what: `all 5 refusals said:\n${wb.stderr()}` });
      for (let i = 0; i < 3; i++) await (await KINDS[0]!.send(wb.url)).arrayBuffer();
      await waitFor(() => accounted() === 8, { timeoutMs: 30_000, what: `all 8 refusals said:\n${wb.stderr()}` });
      assert.ok(said().filter((l) => l.fields.event !== 'requests_refused').length >= 2, `a later window has a first line again:\n${wb.stderr()}`);
    } finally {
      await wb.stop();
    }
  });

  it('--metrics counts refused requests by reason', async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--metrics'], { WORKBENCH_TOKEN: TOKEN, WORKBENCH_MAX_MESSAGE_BYTES: String(LIMIT) });
    try {
      await sendAll(wb, 2);
      const text = await (await fetch(`${wb.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      for (const kind of KINDS) assert.match(text, new RegExp(`^mcp_workbench_http_refused_total\\{reason="${kind.reason}"\\} 2$`, 'm'), text);
      // Every reason is a series from the start, so a rate over it needs no first refusal.
      assert.match(text, /^mcp_workbench_http_refused_total\{reason="session_limit"\} 0$/m, text);
    } finally {
      await wb.stop();
    }
  });
});

// Requests a scanner or a broken client sends that never reach MCP handling, or that the MCP 2026-07-28 checks refuse
// before any server answers them: each counted by reason, logged a line per kind and source a window, and answered
// byte for byte as before they were counted (test/fixtures/refused-answers.ts).
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_POST = { ...AUTH, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const MODERN = { ...JSON_POST, 'mcp-protocol-version': '2026-07-28' };
const modern = (method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = MODERN_ENVELOPE): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: meta } });
type Probe = { name: string; reason: 'not_found' | 'method_not_allowed' | 'bad_request'; method: string; path: string; headers: Record<string, string>; body?: string };
const PROBES: Probe[] = [
  // What scanners hit: a path that is not served, a method a path does not take.
  { name: 'other path', reason: 'not_found', method: 'GET', path: '/wp-login.php', headers: {} },
  { name: 'health POST', reason: 'method_not_allowed', method: 'POST', path: '/healthz', headers: {} },
  { name: 'metrics POST', reason: 'method_not_allowed', method: 'POST', path: '/metrics', headers: AUTH },
  { name: 'mcp PUT', reason: 'method_not_allowed', method: 'PUT', path: '/mcp', headers: AUTH },
  // A handshake-era client that gets it wrong.
  { name: 'GET no session', reason: 'bad_request', method: 'GET', path: '/mcp', headers: { ...AUTH, accept: 'text/event-stream' } },
  { name: 'DELETE no session', reason: 'bad_request', method: 'DELETE', path: '/mcp', headers: AUTH },
  { name: 'legacy ping no session', reason: 'bad_request', method: 'POST', path: '/mcp', headers: JSON_POST, body: PING },
  { name: 'not json', reason: 'bad_request', method: 'POST', path: '/mcp', headers: JSON_POST, body: '{nope' },
  { name: 'empty batch', reason: 'bad_request', method: 'POST', path: '/mcp', headers: JSON_POST, body: '[]' },
  { name: 'not jsonrpc', reason: 'bad_request', method: 'POST', path: '/mcp', headers: JSON_POST, body: '{"hello":1}' },
  // A 2026-07-28 client that gets it wrong: headers against the body, a version not served, a malformed envelope.
  { name: 'modern version header mismatch', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...MODERN, 'mcp-protocol-version': '2025-06-18', 'mcp-method': 'tools/list' }, body: modern('tools/list') },
  { name: 'modern no version header', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...JSON_POST, 'mcp-method': 'tools/list' }, body: modern('tools/list') },
  { name: 'modern no method header', reason: 'bad_request', method: 'POST', path: '/mcp', headers: MODERN, body: modern('tools/list') },
  { name: 'modern method mismatch', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...MODERN, 'mcp-method': 'prompts/list' }, body: modern('tools/list') },
  {
    name: 'modern unsupported version',
    reason: 'bad_request',
    method: 'POST',
    path: '/mcp',
    headers: { ...MODERN, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    body: modern('tools/list', {}, { ...MODERN_ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }),
  },
  { name: 'modern header no envelope', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...MODERN, 'mcp-method': 'tools/list' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) },
  { name: 'modern bad envelope', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...MODERN, 'mcp-method': 'tools/list' }, body: modern('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }) },
  { name: 'modern no mcp-name', reason: 'bad_request', method: 'POST', path: '/mcp', headers: { ...MODERN, 'mcp-method': 'tools/call' }, body: modern('tools/call', { name: 'use_tool', arguments: {} }) },
];
const NEW_REASONS = ['not_found', 'method_not_allowed', 'bad_request'] as const;
const TIMES = 3;

/** Sends a probe and checks its answer against the one captured before refusals of its kind were counted. */
async function sendProbe(origin: string, probe: Probe): Promise<void> {
  const response = await fetch(origin + probe.path, { method: probe.method, headers: probe.headers, ...(probe.body === undefined ? {} : { body: probe.body }) });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!['date', 'connection', 'keep-alive'].includes(name)) headers[name] = value;
  });
  const answer: CapturedAnswer = { status: response.status, headers, body: await response.text() };
  assert.deepEqual(answer, REFUSED_ANSWERS[probe.name], `${probe.name}: the same answer as before`);
}

const scrape = async (wb: HttpWorkbench): Promise<string> => (await fetch(`${wb.origin}/metrics`, { headers: AUTH })).text();
const refusedMetric = (text: string, reason: string): number => {
  const match = new RegExp(`^mcp_workbench_http_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text);
  assert.ok(match, `mcp_workbench_http_refused_total{reason="${reason}"} is a series:\n${text}`);
  return Number(match[1]);
};

describe('serve --http: refusals of paths, methods and malformed requests', () => {
  it('counts and logs each, answering as before: a scanner at debug, a would-be MCP client (400) at info', async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--metrics', '--max-sessions', '1', '--log-level', 'debug', '--log-format', 'json'], { WORKBENCH_TOKEN: TOKEN });
    const sent = { not_found: 0, method_not_allowed: 0, bad_request: 0 };
    let stderr = '';
    try {
      const before = await scrape(wb);
      for (const reason of NEW_REASONS) assert.equal(refusedMetric(before, reason), 0, `${reason} is a series from the start`);
      for (let i = 0; i < TIMES; i++) {
        for (const probe of PROBES) {
          await sendProbe(wb.origin, probe);
          sent[probe.reason]++;
        }
      }
      // At the session limit a 2026-07-28 request the checks refuse gets its own 400 (README "Refused requests do
      // nothing"), counted as well.
      const session = await wb.connect(AUTH);
      await sendProbe(wb.origin, PROBES.find((p) => p.name === 'modern version header mismatch')!);
      sent.bad_request++;
      await session.close();
      const after = await scrape(wb);
      for (const reason of NEW_REASONS) assert.equal(refusedMetric(after, reason), sent[reason], `${reason}:\n${after}`);
    } finally {
      await wb.stop();
      stderr = wb.stderr();
    }
    const lines = logLines(stderr);
    // Sources: the address alone before the token is checked (an unknown path, /healthz), with the token after it.
    const sources = { not_found: 1, method_not_allowed: 2, bad_request: 1 };
    const levels = { not_found: 'debug', method_not_allowed: 'debug', bad_request: 'info' };
    for (const reason of NEW_REASONS) {
      const first = lines.filter((l) => l.fields.reason === reason && l.fields.event === 'request_refused');
      const more = lines.filter((l) => l.fields.reason === reason && l.fields.event === 'requests_refused');
      assert.ok(first.length >= 1 && first.length <= sources[reason], `${reason}: a line per source (${first.length}):\n${stderr}`);
      assert.ok(more.length <= 1, `${reason}: one count line for the window:\n${stderr}`);
      assert.equal(first.length + more.reduce((n, l) => n + Number(l.fields.count), 0), sent[reason], `${reason}: every one said once:\n${stderr}`);
      for (const line of [...first, ...more]) assert.equal(line.level, levels[reason], `${reason}: ${line.message}`);
      const summary = lines.filter((l) => l.fields.event === 'activity');
      assert.equal(summary.reduce((n, l) => n + Number(l.fields[`refused_${reason}`] ?? 0), 0), sent[reason], `${reason} in the summary:\n${stderr}`);
    }
    // The first 400 says what was wrong and what to do.
    const bad = lines.find((l) => l.fields.reason === 'bad_request' && l.fields.event === 'request_refused')!;
    assert.match(bad.message, /^refused GET "\/mcp" from 127\.0\.0\.1 \(token:[0-9a-f]{8}\): 400 .*Mcp-Session-Id.*initialize/);
    assert.equal(bad.fields.http_status, 400);
    assert.match(lines.filter((l) => l.fields.event === 'activity').at(-1)!.message, /refused requests: .*400 bad request ×/);
  });
});
