import assert from 'node:assert/strict';
import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureServer, startWorkbench, structuredAnswer, textOf, waitFor, workbenchErrorCode, type RunningWorkbench } from '../helpers/workbench-process.js';

/** The parts of an open_toolbox answer these tests read: the tools shown, and the warning while the state file is broken. */
interface OpenToolboxAnswer {
  tools: { name: string }[];
  state_warning?: string;
}

describe('a state file that breaks while the workbench runs never re-enables a tool: calls are refused until it is good again', () => {
  let running: RunningWorkbench;
  let statePath: string;

  before(async () => {
    running = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } });
    statePath = join(running.dir, 'tool-state.json');
    await writeFile(statePath, JSON.stringify({ enabled: [], disabled: ['tb__fx__echo'] }));
    const applied = await waitFor(async () => workbenchErrorCode(await running.useTool('tb', 'tb__fx__echo', { text: 'x' })) === 'TOOL_DISABLED', 10_000);
    assert.ok(applied, 'the state file disabled the tool');
  });
  after(() => running.close());

  /**
   * Changes the file, waits until the workbench has reacted (a refusal naming this problem of the file), then checks
   * that calls are refused (fail closed: the disabled tool and every other) and that open_toolbox shows the last good
   * state, with a warning that names the problem.
   */
  const breakAndCheck = async (label: string, change: () => Promise<void>, problem: string, code = 'STATE_INVALID'): Promise<OpenToolboxAnswer> => {
    await change();
    const refusesWith = async (): Promise<boolean> => {
      const result = await running.useTool('tb', 'tb__fx__add', { a: 1, b: 2 });
      return workbenchErrorCode(result) === code && textOf(result).includes(problem);
    };
    assert.ok(await waitFor(refusesWith, 10_000), `${label}: a refusal names the problem "${problem}":\n${running.stderr()}`);
    for (const tool of ['tb__fx__echo', 'tb__fx__add']) {
      const result = await running.useTool('tb', tool, { text: 'x', a: 1, b: 2 });
      assert.equal(workbenchErrorCode(result), code, `${label}: ${tool} refused, got ${textOf(result)}`);
      assert.ok(textOf(result).includes(statePath), `${label}: the refusal names the file`);
    }
    const opened = structuredAnswer<OpenToolboxAnswer>(await running.call('open_toolbox', { toolbox_name: 'tb' }), 'tools');
    assert.ok(!opened.tools.some((t) => t.name === 'tb__fx__echo'), `${label}: open_toolbox does not list it`);
    assert.ok(opened.state_warning?.includes(problem), `${label}: open_toolbox warns, naming the problem: ${opened.state_warning}`);
    return opened;
  };

  it('a half-saved file: the last good state stays, the file stays where it is', async () => {
    const opened = await breakAndCheck('half-saved', () => writeFile(statePath, '{"enabled": [], "disab'), `${statePath} is invalid at line 1, column 17`);
    assert.ok((await readdir(running.dir)).includes('tool-state.json'), 'not moved aside while running');
    assert.match(opened.state_warning ?? '', /use_tool refuses every call until it is fixed; the tools shown are as of its last good content/);
  });

  it('a key written twice (the last would enable everything): refused the same way', async () => {
    await breakAndCheck(
      'duplicate key',
      () => writeFile(statePath, '{"enabled": [], "disabled": ["tb__fx__echo"], "disabled": []}'),
      'key "disabled" is written twice',
    );
  });

  it('a file that cannot be read (here: replaced by a directory, as EACCES would for a non-root user), said in words', async () => {
    const opened = await breakAndCheck(
      'unreadable',
      async () => {
        await rm(statePath, { force: true });
        await mkdir(statePath);
      },
      `${statePath} cannot be read: it is a directory, not a file`,
      'STATE_UNREADABLE',
    );
    assert.doesNotMatch(opened.state_warning ?? '', /EISDIR|illegal operation/, 'what is wrong, not an error code');
    await rm(statePath, { recursive: true, force: true });
  });

  it('a symbolic link whose target was moved away (a dotfiles folder): refused the same way, not read as "no file"', async () => {
    const dotfiles = join(running.dir, 'dotfiles');
    await mkdir(dotfiles);
    await writeFile(join(dotfiles, 'tool-state.json'), JSON.stringify({ enabled: [], disabled: ['tb__fx__echo'] }));
    await rm(statePath, { force: true });
    await symlink(join(dotfiles, 'tool-state.json'), statePath);
    const followed = await waitFor(async () => workbenchErrorCode(await running.useTool('tb', 'tb__fx__echo', { text: 'x' })) === 'TOOL_DISABLED', 10_000);
    assert.ok(followed, 'the linked file is followed (it disables echo)');
    await breakAndCheck('dangling link', () => rename(dotfiles, join(running.dir, 'dotfiles-moved')), `is a symbolic link to ${join(dotfiles, 'tool-state.json')}, which does not exist`, 'STATE_UNREADABLE');
    await rm(statePath, { force: true });
  });

  it('once the file is valid again, its content applies', async () => {
    await writeFile(statePath, JSON.stringify({ enabled: [], disabled: [] }));
    const enabled = await waitFor(async () => (await running.useTool('tb', 'tb__fx__echo', { text: 'x' })).isError !== true, 10_000);
    assert.ok(enabled, 'the fixed file enabled the tool again');
  });
});
