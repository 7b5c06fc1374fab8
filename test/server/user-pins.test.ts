import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, tokenClient } from '../helpers/era-workbench.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, structuredAnswer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// Pinned tool definitions of a server whose entry names `${user:…}` (README "Pinned tool definitions", "Files of each
// user"): each user's process may list tools of that user's own, so each user's first sight is recorded for that user
// and compared only with that user's later listings — one user never makes another's tools "new since approved".

const TOKEN_A = 'alice-0123456789abcdef0123456789abcdef';
const TOKEN_B = 'bob-0123456789abcdef0123456789abcdef0123';
const userId = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);
const [ID_A, ID_B] = [userId(TOKEN_A), userId(TOKEN_B)];

/** A server listing a tool named for the user its process serves. */
const perUser = (extra: Record<string, unknown>, server: Record<string, unknown> = {}) => ({
  ...extra,
  toolboxes: { lab: { mcpServers: { own: { ...fixtureServer(), ...server, env: { FIXTURE_EXTRA_TOOLS: 'ledger_${user:id}' } } } } },
});

interface Head {
  tools: { name: string }[];
  tools_held?: { name: string; change: string; note: string }[];
  tools_unapproved?: { name: string; change: string; note: string }[];
}
const ledgers = (list: readonly { name: string }[] | undefined): string[] => (list ?? []).map((t) => t.name).filter((n) => n.includes('ledger_'));

async function client(url: string, token: string, era: 'modern' | 'legacy'): Promise<Client> {
  const c = await tokenClient(url, token, era);
  assert.equal(c.getProtocolEra(), era);
  return c;
}

const open = async (c: Client): Promise<Head> =>
  structuredAnswer<Head>((await c.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult, 'tools');
const ledger = async (c: Client, id: string): Promise<CallToolResult> =>
  (await c.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: `lab__own__ledger_${id}`, arguments: {} } })) as CallToolResult;
const pinnedKeys = async (wb: HttpWorkbench): Promise<string[]> => {
  const text = await readFile(join(wb.dir, 'tool-pins.json'), 'utf8').catch(() => '{"servers":{}}');
  return Object.keys((JSON.parse(text) as { servers: Record<string, unknown> }).servers).sort();
};

for (const [eraA, eraB] of [
  ['modern', 'legacy'],
  ['legacy', 'modern'],
] as const) {
  describe(`tool pins of a \${user:…} server over --http (${eraA} client first, then ${eraB})`, () => {
    test("the second user's own tools are not held because the first user's process was listed first", async () => {
      const wb = await startHttpWorkbench(perUser({ toolChanges: 'quarantine' }), ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
      const a = await client(wb.url, TOKEN_A, eraA);
      let b: Client | undefined;
      try {
        assert.deepEqual(ledgers((await open(a)).tools), [`lab__own__ledger_${ID_A}`]);
        assert.ok(await waitFor(async () => (await pinnedKeys(wb)).length > 0, 10_000), "the first user's first sight is recorded");
        b = await client(wb.url, TOKEN_B, eraB);
        const head = await open(b);
        assert.deepEqual(ledgers(head.tools_held), [], JSON.stringify(head.tools_held));
        assert.deepEqual(ledgers(head.tools), [`lab__own__ledger_${ID_B}`]);
        const called = await ledger(b, ID_B);
        assert.notEqual(called.isError, true, textOf(called));
        // Each user's first sight is its own, and the first user's stays as recorded.
        assert.ok(await waitFor(async () => (await pinnedKeys(wb)).length === 2, 10_000), 'both users recorded');
        assert.deepEqual(await pinnedKeys(wb), [`lab/own@${ID_A}`, `lab/own@${ID_B}`].sort());
        assert.notEqual((await ledger(a, ID_A)).isError, true);
      } finally {
        await Promise.allSettled([a.close(), b?.close()]);
        await wb.stop();
      }
    });
  });
}

describe('tools approve --user: a ${user:…} server under quarantine: true', () => {
  for (const era of ['modern', 'legacy'] as const) {
    test(`approving one user's tools (${era} clients) makes them usable for that user only, and the note names the command`, async () => {
      const wb = await startHttpWorkbench(perUser({}, { quarantine: true }), ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
      const [a, b] = [await client(wb.url, TOKEN_A, era), await client(wb.url, TOKEN_B, era)];
      const files = ['--config', wb.configPath, '--state-file', join(wb.dir, 'tool-state.json')];
      try {
        const held = (await open(b)).tools_held?.find((t) => t.name === `lab__own__ledger_${ID_B}`);
        assert.match(held?.note ?? '', new RegExp(`tools approve lab__own__ledger_${ID_B} --user ${ID_B}`), JSON.stringify(held));
        const refused = await ledger(b, ID_B);
        assert.equal(workbenchErrorCode(refused), 'TOOL_HELD');
        assert.match(textOf(refused), new RegExp(`tools diff lab/own --user ${ID_B}.*tools approve lab__own__ledger_${ID_B} --user ${ID_B}`, 's'));
        assert.deepEqual(ledgers((await open(a)).tools_held), [`lab__own__ledger_${ID_A}`]);

        // Without --user the operator's own (user `local`) listing is meant: it has no tool of B's name.
        const local = await runCliAsync(['tools', 'approve', `lab__own__ledger_${ID_B}`, ...files]);
        assert.notEqual(local.code, 0);
        assert.match(local.stderr, /No listed tool matches/);

        const diff = await runCliAsync(['tools', 'diff', 'lab/own', '--user', ID_B, '--json', ...files]);
        assert.equal(diff.code, 0, diff.stderr);
        assert.ok((JSON.parse(diff.stdout) as { changes: { tool: string }[] }).changes.some((c) => c.tool === `ledger_${ID_B}`), diff.stdout);

        const approve = await runCliAsync(['tools', 'approve', 'lab__own__*', '--user', ID_B, ...files]);
        assert.equal(approve.code, 0, approve.stderr);
        assert.match(approve.stdout, new RegExp(`lab__own__ledger_${ID_B}`));
        assert.ok(await waitFor(async () => (await ledger(b, ID_B)).isError !== true, 10_000), "B's approved tool is usable");
        assert.equal(workbenchErrorCode(await ledger(a, ID_A)), 'TOOL_HELD', "A's stays held");
        assert.deepEqual(await pinnedKeys(wb), [`lab/own@${ID_B}`]);

        const bad = await runCliAsync(['tools', 'approve', 'lab__own__*', '--user', 'bob', ...files]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, /--user/);
      } finally {
        await Promise.allSettled([a.close(), b.close()]);
        await wb.stop();
      }
    });
  }
});

describe('tool pins of a ${user:…} server over stdio (the one user, local)', () => {
  test('are filed under toolbox/server as before, so a pins file recorded earlier keeps working', async () => {
    const wb = await startEra('stdio', 'legacy', perUser({}));
    try {
      await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } });
      const pins = join(wb.dir, 'tool-pins.json');
      const keys = async (): Promise<string[]> => Object.keys((JSON.parse(await readFile(pins, 'utf8').catch(() => '{"servers":{}}')) as { servers: object }).servers);
      assert.ok(await waitFor(async () => (await keys()).length > 0, 10_000), 'the first sight is recorded');
      assert.deepEqual(await keys(), ['lab/own']);
    } finally {
      await wb.close();
    }
  });
});

describe('doctor and the pins of a ${user:…} server', () => {
  test("checks each user's pins against that user's own listing, and says which --user to review and approve with", async () => {
    const { dir, cleanup } = await tempDir('wb-doctor-user-pins-');
    const configPath = join(dir, 'workbench-config.json');
    const files = ['--config', configPath, '--state-file', join(dir, 'tool-state.json')];
    const env = { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    try {
      await writeFile(configPath, JSON.stringify(perUser({}, { quarantine: true })));
      // B approved only the tool named for B; local (the operator) approved everything it is listed.
      const approveB = await runCliAsync(['tools', 'approve', `lab__own__ledger_${ID_B}`, '--user', ID_B, ...files], env);
      assert.equal(approveB.code, 0, approveB.stderr);
      const approveLocal = await runCliAsync(['tools', 'approve', 'lab__own__*', ...files], env);
      assert.equal(approveLocal.code, 0, approveLocal.stderr);

      const doctor = await runCliAsync(['doctor', '--json', ...files], env);
      const report = JSON.parse(doctor.stdout) as { toolboxes: { servers: { problems: { kind: string; message: string; items: string[] }[] }[] }[] };
      const problems = report.toolboxes.flatMap((t) => t.servers.flatMap((s) => s.problems));
      // Local's pins approve its listing; B's approve only B's own ledger: the rest is said for B, with B's --user.
      // (Before, only local's pins were checked, and B's not at all.)
      assert.equal(problems.length, 1, doctor.stdout);
      const [forB] = problems;
      assert.equal(forB!.kind, 'tool-unapproved', doctor.stdout);
      assert.match(forB!.message, new RegExp(`for user ${ID_B}.*tools diff lab/own --user ${ID_B}.*tools approve lab__own__NAME --user ${ID_B}`));
      assert.ok(forB!.items.includes('echo (new)'), doctor.stdout);
      assert.ok(!forB!.items.some((i) => i.startsWith('ledger_')), doctor.stdout);
    } finally {
      await cleanup();
    }
  });
});

describe('tools approve of a "shared": true ${user:…} server', () => {
  test('its tools are user shared\'s: without --user the refusal says to add --user shared, with it they are approved', async () => {
    const { dir, cleanup } = await tempDir('wb-approve-shared-');
    const configPath = join(dir, 'workbench-config.json');
    const files = ['--config', configPath, '--state-file', join(dir, 'tool-state.json')];
    const env = { MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    try {
      await writeFile(configPath, JSON.stringify(perUser({}, { shared: true })));
      const local = await runCliAsync(['tools', 'approve', 'lab__own__ledger_shared', ...files], env);
      assert.notEqual(local.code, 0, local.stdout);
      assert.match(local.stderr, /No listed tool matches/);
      assert.match(local.stderr, /lab\/own names \$\{user:…\} and was listed as user local's; it is "shared": true, so over --http its tools are user shared's: add --user shared\./);
      const shared = await runCliAsync(['tools', 'approve', 'lab__own__ledger_shared', '--user', 'shared', ...files], env);
      assert.equal(shared.code, 0, shared.stderr);
      assert.match(shared.stdout, /lab__own__ledger_shared/);
      const pins = JSON.parse(await readFile(join(dir, 'tool-pins.json'), 'utf8')) as { servers: object };
      assert.deepEqual(Object.keys(pins.servers), ['lab/own@shared']);
    } finally {
      await cleanup();
    }
  });
});

describe('tools diff and tools approve of a ${user:…} server whose pins are other users\' only', () => {
  test('say that the user acted on has no pins, name the users that have them and the --user that reviews theirs', async () => {
    const { dir, cleanup } = await tempDir('wb-diff-other-users-');
    const configPath = join(dir, 'workbench-config.json');
    const files = ['--config', configPath, '--state-file', join(dir, 'tool-state.json')];
    const env = { HOME: join(dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    try {
      await writeFile(configPath, JSON.stringify(perUser({})));
      const approveB = await runCliAsync(['tools', 'approve', 'lab__own__*', '--user', ID_B, ...files], env);
      assert.equal(approveB.code, 0, approveB.stderr);

      // Before: "lab/own has never been approved: all … of its tools are new", as if nobody had pins.
      const diff = await runCliAsync(['tools', 'diff', 'lab/own', ...files], env);
      assert.equal(diff.code, 0, diff.stderr);
      assert.match(diff.stdout, new RegExp(`user local has no pins for lab/own; user ${ID_B} has: add --user ${ID_B}`));
      const json = await runCliAsync(['tools', 'diff', 'lab/own', '--json', ...files], env);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual((JSON.parse(json.stdout) as { users_with_pins?: string[] }).users_with_pins, [ID_B]);
      // Another user without pins is told the same; the user with pins is not.
      const other = await runCliAsync(['tools', 'diff', 'lab/own', '--user', ID_A, ...files], env);
      assert.match(other.stdout, new RegExp(`user ${ID_A} has no pins for lab/own; user ${ID_B} has: add --user ${ID_B}`));
      const own = await runCliAsync(['tools', 'diff', 'lab/own', '--user', ID_B, ...files], env);
      assert.equal(own.code, 0, own.stderr);
      assert.doesNotMatch(own.stdout, /has no pins/);

      // Approving as local is what was asked, but it is said that it was local's and whose pins exist besides.
      const approveLocal = await runCliAsync(['tools', 'approve', 'lab__own__echo', ...files], env);
      assert.equal(approveLocal.code, 0, approveLocal.stderr);
      assert.match(approveLocal.stdout, new RegExp(`approved for user local.*user ${ID_B} has pins of their own for lab/own: add --user ${ID_B}`, 's'));
      const pins = JSON.parse(await readFile(join(dir, 'tool-pins.json'), 'utf8')) as { servers: object };
      assert.deepEqual(Object.keys(pins.servers).sort(), ['lab/own', `lab/own@${ID_B}`]);
      // Now that local has pins of its own, the diff is local's alone, without the note.
      const after = await runCliAsync(['tools', 'diff', 'lab/own', ...files], env);
      assert.doesNotMatch(after.stdout, /has no pins/);
    } finally {
      await cleanup();
    }
  });

  test('a "shared": true server whose pins are user shared\'s: the diff without --user names --user shared', async () => {
    const { dir, cleanup } = await tempDir('wb-diff-shared-');
    const configPath = join(dir, 'workbench-config.json');
    const files = ['--config', configPath, '--state-file', join(dir, 'tool-state.json')];
    const env = { HOME: join(dir, 'home'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
    try {
      await writeFile(configPath, JSON.stringify(perUser({}, { shared: true })));
      const approve = await runCliAsync(['tools', 'approve', 'lab__own__*', '--user', 'shared', ...files], env);
      assert.equal(approve.code, 0, approve.stderr);
      const diff = await runCliAsync(['tools', 'diff', 'lab/own', ...files], env);
      assert.equal(diff.code, 0, diff.stderr);
      assert.match(diff.stdout, /user local has no pins for lab\/own; user shared has: add --user shared/);
    } finally {
      await cleanup();
    }
  });
});
