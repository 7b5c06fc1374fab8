import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHttpWorkbench, type HttpSession, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

// serve --http --metrics (README "Serving over HTTP"): Prometheus metrics at /metrics behind the token, fed by the
// calls the workbench answers, with labels from the config only.

const TOKEN = 'metrics-test-token-0123456789abcdef';
const config = { toolboxes: { fx: { mcpServers: { f: fixtureServer() } } } };

/** One metric line's value, e.g. value(text, 'mcp_workbench_calls_total{kind="call",…}'); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = line.slice(name.length);
    if (wanted.every((w) => body.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('serve --http --metrics', () => {
  let wb: HttpWorkbench;
  let session: HttpSession;
  before(async () => {
    wb = await startHttpWorkbench(config, ['--http', '0', '--metrics'], { WORKBENCH_TOKEN: TOKEN });
    session = await wb.connect({ authorization: `Bearer ${TOKEN}` });
  });
  after(async () => {
    await session?.close();
    await wb?.stop();
  });

  const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const scrape = (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => fetch(`${wb.origin}/metrics`, { headers });

  it('is behind the token', async () => {
    assert.equal((await scrape({})).status, 401);
    assert.equal((await scrape({ authorization: 'Bearer wrong' })).status, 401);
  });

  it('counts calls by toolbox, server and outcome, with latency, sessions and connected servers; made-up names are one label', async () => {
    const ok = await call('use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'hi' } });
    assert.notEqual(ok.isError, true, textOf(ok));
    await call('use_tool', { toolbox_name: 'fx', tool_name: 'fx__f__fail', arguments: { message: 'no' } });
    await call('use_tool', { toolbox_name: 'made-up-1', tool_name: 'x' });
    await call('use_tool', { toolbox_name: 'made-up-2', tool_name: 'y' });
    await call('open_toolbox', { toolbox_name: 'fx' });

    const response = await scrape();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    const text = await response.text();
    assert.equal(sample(text, 'mcp_workbench_calls_total', { kind: 'call', toolbox: 'fx', server: 'f', outcome: 'ok' }), 1, text);
    assert.equal(sample(text, 'mcp_workbench_calls_total', { kind: 'call', toolbox: 'fx', server: 'f', outcome: 'tool_error' }), 1);
    assert.equal(sample(text, 'mcp_workbench_calls_total', { kind: 'call', toolbox: '(unknown)', outcome: 'failed' }), 2, 'client-made names share one label');
    assert.doesNotMatch(text, /made-up/);
    assert.equal(sample(text, 'mcp_workbench_calls_total', { kind: 'open', toolbox: 'fx', outcome: 'ok' }), 1);
    assert.equal(sample(text, 'mcp_workbench_call_duration_seconds_count', { kind: 'call', toolbox: 'fx', server: 'f', outcome: 'ok' }), 1);
    assert.ok((sample(text, 'mcp_workbench_sessions', {}) ?? 0) >= 1);
    assert.ok((sample(text, 'mcp_workbench_servers_connected', {}) ?? 0) >= 1);
    assert.ok(sample(text, 'mcp_workbench_process_resident_memory_bytes', {}) !== undefined);
  });
});

describe('serve --http --metrics: restarts', () => {
  it('counts a server connected again after it crashed', async () => {
    const wb = await startHttpWorkbench(config, ['--http', '0', '--metrics'], { WORKBENCH_TOKEN: TOKEN });
    const session = await wb.connect({ authorization: `Bearer ${TOKEN}` });
    try {
      const call = (args: Record<string, unknown>): Promise<CallToolResult> => session.client.callTool({ name: 'use_tool', arguments: args }) as Promise<CallToolResult>;
      await call({ toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'a' } });
      await call({ toolbox_name: 'fx', tool_name: 'fx__f__crash', arguments: { code: 3 } });
      const again = await call({ toolbox_name: 'fx', tool_name: 'fx__f__echo', arguments: { text: 'b' } });
      assert.notEqual(again.isError, true, textOf(again));
      const text = await (await fetch(`${wb.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      assert.equal(sample(text, 'mcp_workbench_server_restarts_total', {}), 1, text.split('\n').filter((l) => l.includes('restarts')).join('\n'));
    } finally {
      await session.close();
      await wb.stop();
    }
  });
});

describe('serve --http without --metrics', () => {
  it('has no /metrics', async () => {
    const wb = await startHttpWorkbench(config, ['--http', '0'], { WORKBENCH_TOKEN: TOKEN });
    try {
      assert.equal((await fetch(`${wb.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
    } finally {
      await wb.stop();
    }
  });
});
