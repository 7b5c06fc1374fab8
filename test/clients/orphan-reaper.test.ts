import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { WATCHDOG_SCRIPT, isOrphanWatchdog } from '../../src/clients/orphan-reaper.js';
import { isAlive, listDescendants } from '../../src/shared/process-tree.js';
import { fixtureServer, startWorkbench, tempDir, waitFor } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

/** A /proc file of a process, for failure messages ('' when it cannot be read). */
function procText(pid: number, name: string): string {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

describe('orphan watchdog', { skip: process.platform === 'win32' ? 'no process groups on Windows' : false }, () => {
  it('ends servers that ignore a closed stdin, and their children, when the workbench is SIGKILLed', async () => {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const grandchildPidFile = join(dir, 'grandchild.pid');
    const running = await startWorkbench({
      toolboxes: {
        tb: {
          mcpServers: {
            stubborn: fixtureServer('--ignore-stdin-close', '--grandchild', grandchildPidFile),
            // Ignores SIGTERM too: only the watchdog's SIGKILL ends it.
            deaf: fixtureServer('--ignore-stdin-close', '--ignore-sigterm'),
          },
        },
      },
    });
    let survivors: number[] = [];
    try {
      const opened = await running.call('open_toolbox', { toolbox_name: 'tb' });
      assert.notEqual(opened.isError, true);
      const grandchild = Number((await readFile(grandchildPidFile, 'utf8')).trim());
      const servers = await running.descendants();
      assert.ok(servers.includes(grandchild), 'the grandchild is one of the workbench descendants');
      assert.equal(servers.length, 3, 'two servers and one grandchild');

      process.kill(running.pid, 'SIGKILL');
      const gone = await waitFor(() => servers.every((pid) => !isAlive(pid)), 10_000);
      survivors = servers.filter(isAlive);
      assert.ok(gone, `still running after the workbench was killed: ${survivors.join(', ')}`);
    } finally {
      for (const pid of survivors) process.kill(pid, 'SIGKILL');
      await running.close();
    }
  });

  /**
   * Starts a server that puts a daemon in a session of its own (setsid), SIGKILLs the workbench and checks that every
   * process of the tree is gone. `learnedFirst`: only once the workbench has seen the daemon in its 2-second reads
   * of the process table (the debug line carries its pid); else at once, so the watchdog's own walk must find it.
   */
  async function killedWithDaemon(learnedFirst: boolean): Promise<void> {
    const { dir, cleanup } = await tempDir();
    after(cleanup);
    const strayPidFile = join(dir, 'stray.pid');
    const running = await startWorkbench(
      { toolboxes: { tb: { mcpServers: { daemonizing: fixtureServer('--ignore-stdin-close', '--setsid-grandchild', strayPidFile) } } } },
      { env: { WORKBENCH_LOG_LEVEL: 'debug', WORKBENCH_LOG_FORMAT: 'json' } },
    );
    let all: number[] = [];
    try {
      assert.notEqual((await running.call('open_toolbox', { toolbox_name: 'tb' })).isError, true);
      assert.ok(await waitFor(async () => (await readFile(strayPidFile, 'utf8').catch(() => '')) !== '', 10_000));
      const stray = Number(await readFile(strayPidFile, 'utf8'));
      all = await running.descendants();
      assert.ok(all.includes(stray), 'the stray is a descendant while its parent lives');
      const learned = (): boolean => logLines(running.stderr()).some((l) => l.fields.pid === stray);
      if (learnedFirst) assert.ok(await waitFor(learned, 15_000), running.stderr());
      process.kill(running.pid, 'SIGKILL');
      const gone = await waitFor(() => all.every((pid) => !isAlive(pid)), 10_000);
      // On failure, say what each survivor is and whether the workbench had learned the stray.
      const survivors = all.filter(isAlive).map((pid) => `${pid}: ${procText(pid, 'stat')} | ${procText(pid, 'cmdline')}`);
      assert.ok(gone, `still running (stray ${stray}; learned by the workbench before the kill: ${learned()}):\n${survivors.join('\n')}`);
    } finally {
      for (const pid of all.filter(isAlive)) process.kill(pid, 'SIGKILL');
      await running.close();
    }
  }

  it('also ends a descendant that left its process group (setsid) when the workbench is SIGKILLed', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, () =>
    killedWithDaemon(true));

  it('ends a descendant that left its process group moments before the workbench is SIGKILLed (before the workbench has seen it)', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, () =>
    killedWithDaemon(false));

  it('never signals a process that reused a stray\'s pid', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async () => {
    // The watchdog checks the recorded start time: a live process (this test's own) listed with another start time
    // must survive the watchdog's end.
    const { spawn } = await import('node:child_process');
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'mcp-workbench-watchdog'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      watchdog.stdin.write(`p${bystander.pid}:1\n`);
      watchdog.stdin.end();
      await new Promise((resolve) => watchdog.once('exit', resolve));
      assert.ok(isAlive(bystander.pid!), 'a pid whose start time does not match is left alone');
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('is replaced at once, with every live group, if it dies while the workbench runs', async () => {
    const running = await startWorkbench({
      toolboxes: {
        one: { mcpServers: { a: fixtureServer('--ignore-stdin-close') } },
        two: { mcpServers: { b: fixtureServer('--ignore-stdin-close') } },
      },
    });
    let servers: number[] = [];
    try {
      assert.notEqual((await running.call('open_toolbox', { toolbox_name: 'one' })).isError, true);
      const [first] = (await listDescendants(running.pid)).filter(isOrphanWatchdog);
      assert.ok(first, 'a watchdog runs once a server does');
      process.kill(first, 'SIGKILL');
      const replaced = async (): Promise<boolean> => {
        const now = (await listDescendants(running.pid)).filter(isOrphanWatchdog);
        return now.length === 1 && now[0] !== first;
      };
      assert.ok(await waitFor(replaced, 5000), 'a new watchdog replaces the one that died');
      // It must know the first server, and learn of the next one.
      assert.notEqual((await running.call('open_toolbox', { toolbox_name: 'two' })).isError, true);
      servers = await running.descendants();
      assert.equal(servers.length, 2);
      process.kill(running.pid, 'SIGKILL');
      assert.ok(await waitFor(() => servers.every((pid) => !isAlive(pid)), 10_000), `still running: ${servers.filter(isAlive).join(', ')}`);
    } finally {
      for (const pid of servers.filter(isAlive)) process.kill(pid, 'SIGKILL');
      await running.close();
    }
  });

  it('exits by itself after a normal shutdown, leaving nothing behind', async () => {
    const running = await startWorkbench({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } });
    let all: number[] = [];
    try {
      assert.notEqual((await running.call('open_toolbox', { toolbox_name: 'tb' })).isError, true);
      all = await listDescendants(running.pid);
      assert.equal(all.filter(isOrphanWatchdog).length, 1, 'one watchdog runs while a server does');
    } finally {
      await running.close();
    }
    assert.ok(await waitFor(() => all.every((pid) => !isAlive(pid)), 5000), 'the server and the watchdog are gone');
  });
});
