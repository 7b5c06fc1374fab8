import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { runCliAsync } from '../helpers/cli-run.js';
import { fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// enable_tools answers with the state it wrote, and the next call must agree with that answer (README "Management
// tools"): the running workbench also follows the state file, and a read of it that began before its own write must
// never put the older content back over the newer.

const config = { toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } };
const ROUNDS = 60;

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const useEcho = (client: Client) => call(client, 'use_tool', { toolbox_name: 'tb', tool_name: 'tb__fx__echo', arguments: { text: 'hi' } });

/**
 * A state file with a long comment: reading it takes a while, so the workbench's own poll of the file is often still
 * reading when enable_tools writes it (the race seen in CI under load, made frequent).
 */
async function slowStateFile(dir: string): Promise<string> {
  const path = join(dir, 'slow-state.json');
  await writeFile(path, `{\n  // ${'padding '.repeat(50_000)}\n  "enabled": [],\n  "disabled": []\n}\n`);
  return path;
}

for (const over of ['stdio', 'http'] as const) {
  for (const era of ERAS) {
    describe(`enable_tools then a call at once (${over}, ${era})`, () => {
      it(`never answers with the state from before its own write, over ${ROUNDS} disable/enable rounds`, { timeout: 600_000 }, async (t) => {
        const { dir, cleanup } = await tempDir();
        t.after(cleanup);
        const stateFile = await slowStateFile(dir);
        const wb = await startEra(over, era, config, () => {}, {}, { args: ['--management-tools', '--state-file', stateFile] });
        try {
          assert.notEqual((await useEcho(wb.client)).isError, true);
          for (let round = 0; round < ROUNDS; round++) {
            const disabled = await call(wb.client, 'enable_tools', { disable: ['tb__fx__echo'] });
            assert.notEqual(disabled.isError, true, textOf(disabled));
            const refused = await useEcho(wb.client);
            assert.equal(workbenchErrorCode(refused), 'TOOL_DISABLED', `round ${round}: a call right after disable_tools ran: ${textOf(refused)}`);
            const enabled = await call(wb.client, 'enable_tools', { enable: ['tb__fx__echo'] });
            assert.notEqual(enabled.isError, true, textOf(enabled));
            const answered = await useEcho(wb.client);
            assert.notEqual(answered.isError, true, `round ${round}: a call right after enable_tools was refused: ${textOf(answered)}`);
          }
          assert.doesNotMatch(wb.stderr(), /tool state changed in/, 'its own writes are not reported as changes of the file');

          // A change from elsewhere (the CLI) is still followed.
          const cli = await runCliAsync(['tools', 'disable', '--config', wb.configPath, '--state-file', stateFile, 'tb__fx__echo'], { HOME: dir });
          assert.equal(cli.code, 0, cli.stderr);
          await waitFor(async () => workbenchErrorCode(await useEcho(wb.client)) === 'TOOL_DISABLED', { timeoutMs: 30_000, what: 'the CLI disable to apply' });
          assert.match(wb.stderr(), /tool state changed in/);
        } finally {
          await wb.close();
        }
      });
    });
  }
}

describe('two workbenches sharing one state file', () => {
  it("lose none of each other's enable_tools changes, and each follows the other's", { timeout: 300_000 }, async (t) => {
    const { dir, cleanup } = await tempDir();
    t.after(cleanup);
    const stateFile = join(dir, 'shared-state.json');
    const launch = { args: ['--management-tools', '--state-file', stateFile] };
    const [a, b] = [await startEra('stdio', 'legacy', config, () => {}, {}, launch), await startEra('http', 'modern', config, () => {}, {}, launch)];
    try {
      const names = (who: string) => Array.from({ length: 15 }, (_, i) => `tb__fx__${who}_${i}`);
      const disableEach = async (client: Client, who: string) => {
        for (const name of names(who)) assert.notEqual((await call(client, 'enable_tools', { disable: [name] })).isError, true);
      };
      await Promise.all([disableEach(a.client, 'a'), disableEach(b.client, 'b')]);
      const written = JSON.parse(await readFile(stateFile, 'utf8')) as { disabled: string[] };
      assert.deepEqual([...written.disabled].sort(), [...names('a'), ...names('b')].sort());

      // Each follows the other: echo disabled by one is refused by both, enabled again by the other is callable by both.
      assert.notEqual((await call(a.client, 'enable_tools', { disable: ['tb__fx__echo'] })).isError, true);
      await waitFor(async () => workbenchErrorCode(await useEcho(b.client)) === 'TOOL_DISABLED', { timeoutMs: 30_000, what: "b to follow a's disable" });
      assert.notEqual((await call(b.client, 'enable_tools', { enable: ['tb__fx__echo'] })).isError, true);
      assert.notEqual((await useEcho(b.client)).isError, true);
      await waitFor(async () => (await useEcho(a.client)).isError !== true, { timeoutMs: 30_000, what: "a to follow b's enable" });
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });
});
