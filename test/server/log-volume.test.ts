import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { startEra, tokenClient, type EraName } from '../helpers/era-workbench.js';
import { logLines, type LogLine } from '../helpers/log-lines.js';
import { waitFor } from '../helpers/wait-for.js';
import { everythingServer, fixtureServer } from '../helpers/workbench-process.js';

// A long-running `serve --http` serves many short sessions. At the default level its log must stay readable: what
// every session does (opened, closed, expired, each of its servers started again) is debug, and one summary line
// counts it; what an operator must act on (a server that fails, the first start of each server) stays in view
// (README "Command line", Logs).

const SESSIONS = 20;
const TOKENS = Array.from({ length: SESSIONS }, (_, i) => `user-${String(i).padStart(2, '0')}-0123456789abcdef0123456789abcdef`);
const CONFIG = {
  toolboxes: {
    dev: { mcpServers: { fx: fixtureServer() } },
    ops: { mcpServers: { everything: everythingServer(), broken: fixtureServer('--crash-on-start', '3') } },
  },
};

/** What a session does: open a toolbox and call a tool, then end (DELETE), or leave without a word (abandoned). */
type Plan = { toolbox: 'dev' | 'ops'; tool: string; args: Record<string, unknown>; ends: 'delete' | 'abandon' };
const PLANS: Plan[] = [
  { toolbox: 'dev', tool: 'fx__echo', args: { text: 'hi' }, ends: 'delete' },
  { toolbox: 'ops', tool: 'everything__echo', args: { message: 'hi' }, ends: 'delete' },
  { toolbox: 'dev', tool: 'fx__echo', args: { text: 'hi' }, ends: 'abandon' },
  { toolbox: 'ops', tool: 'broken__echo', args: {}, ends: 'abandon' },
];

/** What both SDKs' clients offer: a tool call. */
interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

async function oneSession(wb: HttpWorkbench, i: number): Promise<void> {
  const era: EraName = i % 2 === 0 ? 'legacy' : 'modern';
  const plan = PLANS[Math.floor(i / 2) % PLANS.length]!;
  const token = TOKENS[i]!;
  const use = async (client: Caller): Promise<void> => {
    await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: plan.toolbox } });
    await client.callTool({ name: 'use_tool', arguments: { toolbox_name: plan.toolbox, tool_name: `${plan.toolbox}__${plan.tool}`, arguments: plan.args } });
  };
  if (era === 'legacy' && plan.ends === 'delete') {
    // A handshake-era client of SDK v1, which ends its session with DELETE.
    const session = await wb.connect({ Authorization: `Bearer ${token}` });
    await use(session.client);
    await session.close();
    return;
  }
  // SDK v2 clients send no DELETE on close: a handshake-era one is left to expire; a modern one has no session at all.
  const client = await tokenClient(wb.url, token, era);
  await use(client);
  await client.close();
}

function countByLevel(lines: LogLine[]): Record<LogLine['level'], number> {
  const counts = { debug: 0, info: 0, warn: 0, error: 0 };
  for (const line of lines) counts[line.level]++;
  return counts;
}

describe('the log of a long-running --http workbench at the default level', () => {
  it(`says a constant number of info lines for ${SESSIONS} sessions of both eras, and still warns about a failing server`, { timeout: 300_000 }, async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--session-idle-timeout', '3'], { WORKBENCH_TOKEN: TOKENS.join(',') });
    let stderr = '';
    try {
      for (let i = 0; i < SESSIONS; i++) await oneSession(wb, i);
      // The abandoned sessions and the modern clients expire.
      await waitFor(async () => ((await (await fetch(`${wb.origin}/healthz`)).json()) as { sessions: number }).sessions === 0, {
        timeoutMs: 60_000,
        what: 'every session to end',
      });
    } finally {
      await wb.stop();
      stderr = wb.stderr();
    }
    const lines = logLines(stderr);
    const counts = countByLevel(lines);
    const info = lines.filter((l) => l.level === 'info');
    process.stdout.write(`# log lines by level for ${SESSIONS} sessions: ${JSON.stringify(counts)}\n`);
    // Said once per process: listening, serving, shutting down; once per server that started: its first start; and
    // the activity summary (at most once per interval, and once at shutdown).
    const connected = info.filter((l) => /^connected in \d+ ms/.test(l.message));
    assert.deepEqual(connected.map((l) => l.scope).sort(), ['dev/fx', 'ops/everything'], `each server's first start only:\n${stderr}`);
    const perSession = info.filter((l) => /^session |^modern client /.test(l.message));
    assert.deepEqual(perSession, [], `no info line per session:\n${stderr}`);
    // Once per process: listening, serving, shutting down, the summary; at most three per server (its first start, its
    // tool definitions recorded as approved, a fallback its connect took) — however many sessions there were.
    assert.ok(counts.info <= 4 + 3 * 3, `a constant number of info lines (${JSON.stringify(counts)}):\n${info.map((l) => l.message).join('\n')}`);
    // The broken server is warned about once for its cause, and the summary counts every start of it that failed.
    const brokenSessions = Array.from({ length: SESSIONS }, (_, i) => PLANS[Math.floor(i / 2) % PLANS.length]!.toolbox === 'ops').filter(Boolean).length;
    const warned = lines.filter((l) => l.level === 'warn' && l.scope === 'ops/broken');
    assert.equal(warned.length, 1, stderr);
    assert.match(warned[0]!.message, /exited with code 3/, stderr);
    const summary = info.filter((l) => l.message.startsWith('activity'));
    assert.ok(summary.length >= 1, `an activity summary:\n${stderr}`);
    const said = summary.map((l) => l.message).join('\n');
    // Every failed start is counted: a session that opened the toolbox and then called the tool tried twice.
    const failedStarts = Number(/failed to start: ops\/broken ×(\d+)/.exec(said)?.[1]);
    assert.ok(failedStarts >= brokenSessions, said);
    assert.match(said, new RegExp(`${SESSIONS} opened`), said);
  });

  it('sums up at most every WORKBENCH_LOG_SUMMARY_SECONDS while it runs, each line counting what happened since the last', async () => {
    const wb = await startHttpWorkbench(CONFIG, ['--http', '0'], { WORKBENCH_LOG_SUMMARY_SECONDS: '1', WORKBENCH_LOG_FORMAT: 'json' });
    const summaries = (): LogLine[] => logLines(wb.stderr()).filter((l) => l.fields.event === 'activity');
    const sum = (key: string): number => summaries().reduce((n, l) => n + Number(l.fields[key]), 0);
    try {
      const session = await wb.connect();
      await session.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'dev', tool_name: 'dev__fx__echo', arguments: { text: 'hi' } } });
      await session.close();
      await waitFor(() => sum('closed') === 1, { timeoutMs: 30_000, what: `a summary counting the closed session:\n${wb.stderr()}` });
      assert.equal(sum('opened'), 1, wb.stderr());
      assert.equal(sum('server_starts'), 1, wb.stderr());
      for (const line of summaries()) {
        assert.equal(line.level, 'info');
        assert.ok(Number(line.fields.opened) + Number(line.fields.closed) + Number(line.fields.server_starts) > 0, `only when something happened: ${line.message}`);
      }
    } finally {
      await wb.stop();
    }
  });

  it('over stdio (one client) still tells each start of its servers at info', async () => {
    const wb = await startEra('stdio', 'legacy', CONFIG);
    try {
      await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } });
      await waitFor(() => logLines(wb.stderr()).some((l) => l.level === 'info' && l.scope === 'dev/fx' && /^connected in/.test(l.message)), {
        timeoutMs: 30_000,
        what: 'the info line of dev/fx connecting',
      });
    } finally {
      await wb.close();
    }
  });
});
