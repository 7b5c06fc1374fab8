import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { logLines, type LogLine } from '../helpers/log-lines.js';
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
