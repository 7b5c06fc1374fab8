import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import lockfile from 'proper-lockfile';
import { keepCopy, readToolState } from '../../src/state/read.js';
import { StateFileError } from '../../src/state/file-errors.js';
import { resolveStatePath } from '../../src/state/path.js';
import { updateToolState, type ToolStateUpdate } from '../../src/state/update.js';
import { watchToolState } from '../../src/state/watch.js';
import type { ToolState } from '../../src/catalog/visibility.js';
import { isWorkbenchError } from '../../src/errors.js';
import { createLogger, type Logger } from '../../src/log.js';
import { waitFor } from '../helpers/wait-for.js';

const run = promisify(execFile);
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const toggler = fileURLToPath(new URL('../helpers/state-toggler.ts', import.meta.url));

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'wb-tool-state-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh directory per test, inside the suite's temp dir. */
async function freshDir(): Promise<string> {
  const dir = join(root, `case-${++counter}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

function capture(): { log: Logger; lines: string[]; warnings: () => string[] } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  return { log, lines, warnings: () => lines.filter((l) => l.includes(' warn: ')) };
}

const write = (path: string, state: ToolState | string): Promise<void> =>
  writeFile(path, typeof state === 'string' ? state : `${JSON.stringify(state, null, 2)}\n`);

const json = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8'));

async function update(path: string, change: Parameters<typeof updateToolState>[1], log?: Logger): Promise<ToolStateUpdate> {
  return updateToolState(path, change, { log: log ?? capture().log });
}

describe('resolveStatePath', () => {
  const homedir = '/home/u';

  it('prefers --state-file, then WORKBENCH_STATE_FILE, then ~/.mcp-workbench/tool-state.json', () => {
    const env = { WORKBENCH_STATE_FILE: '/env/state.json' };
    assert.equal(resolveStatePath({ flag: '/flag/state.json', env, homedir }), '/flag/state.json');
    assert.equal(resolveStatePath({ env, homedir }), '/env/state.json');
    assert.equal(resolveStatePath({ env: {}, homedir }), join(homedir, '.mcp-workbench', 'tool-state.json'));
  });

  it('treats blank values as unset, expands a leading ~ and resolves relative paths against cwd', () => {
    assert.equal(resolveStatePath({ flag: '  ', env: { WORKBENCH_STATE_FILE: '' }, homedir }), join(homedir, '.mcp-workbench', 'tool-state.json'));
    assert.equal(resolveStatePath({ env: { WORKBENCH_STATE_FILE: '~/s.json' }, homedir }), join(homedir, 's.json'));
    assert.equal(resolveStatePath({ flag: 'rel/s.json', env: {}, homedir, cwd: '/work' }), '/work/rel/s.json');
  });
});

describe('readToolState', () => {
  it('returns the defaults without a warning when the file (or its directory) is missing', async () => {
    const dir = await freshDir();
    const { log, lines } = capture();
    assert.deepEqual(await readToolState(join(dir, 'tool-state.json'), log), { state: { enabled: [], disabled: [] } });
    assert.deepEqual(await readToolState(join(dir, 'no', 'such', 'tool-state.json'), log), { state: { enabled: [], disabled: [] } });
    assert.deepEqual(lines, []);
  });

  it('returns the lists trimmed, without blanks or duplicates', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: [' a__b__c ', '', 'a__b__c'], disabled: ['x__*', '  ', 'x__*'] });
    assert.deepEqual(await readToolState(path, capture().log), { state: { enabled: ['a__b__c'], disabled: ['x__*'] } });
  });

  it('reads JSONC: comments and trailing commas are fine', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await writeFile(path, '// mine\n{\n  "enabled": [], /* none */\n  "disabled": [\n    "a__b__c", // risky\n  ],\n}\n');
    const { log, lines } = capture();
    assert.deepEqual(await readToolState(path, log), { state: { enabled: [], disabled: ['a__b__c'] } });
    assert.deepEqual(lines, []);
  });

  for (const [label, content, line, column, reason] of [
    ['invalid JSON', '{"enabled": ["a__b__c",', 1, 24, /ends early/],
    ['an empty file', '', 1, 1, /empty/],
    ['a top-level array', '["a__b__c"]\n', 1, 1, /expected an object/],
    ['a list that is not an array', '{\n  "enabled": "a__b__c"\n}\n', 2, 14, /"enabled" must be an array of strings, found a string/],
    ['a list with a non-string', '{"disabled": ["a__b__c", 7]}\n', 1, 26, /strings only, found a number/],
    ['a key written twice', '{\n  "disabled": ["a__b__c"],\n  "disabled": []\n}\n', 3, 3, /"disabled" is written twice/],
    ['a missing comma', '{\n  "disabled": [\n    "a__b__c"\n    "d__e__f"\n  ]\n}\n', 4, 5, /Expected ',' or ']' after array element/],
  ] as const) {
    it(`reports a broken file (${label}) with line and column, and leaves it exactly as it is`, async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      await write(path, content);
      const { log, lines } = capture();

      const read = await readToolState(path, log);

      assert.equal(read.state, undefined, 'no state: never the defaults in place of a broken file');
      assert.ok(read.problem instanceof StateFileError);
      assert.equal(read.problem.code, 'STATE_INVALID');
      assert.deepEqual(read.problem.position, { line, column });
      assert.match(read.problem.reason, reason);
      assert.ok(read.problem.message.includes(`${path} is invalid at line ${line}, column ${column}`), read.problem.message);
      assert.match(read.problem.message, /comments and trailing commas are fine/);
      assert.equal(read.bytes?.toString('utf8'), content);
      assert.deepEqual(await readdir(dir), ['tool-state.json'], 'nothing moved, nothing written beside it');
      assert.equal(await readFile(path, 'utf8'), content);
      assert.deepEqual(lines, []);
    });
  }

  it('keeps working with unknown extra keys, but warns about them', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await writeFile(path, '{"enabled": [], "disabled": ["a__b__c"], "futureKey": 1}');
    const { log, warnings } = capture();
    assert.deepEqual(await readToolState(path, log), { state: { enabled: [], disabled: ['a__b__c'] } });
    assert.equal(warnings().length, 1);
    assert.match(warnings()[0]!, /"futureKey"/);
  });

  it('reports STATE_UNREADABLE when the path exists but cannot be read as a file', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await mkdir(path);
    const read = await readToolState(path, capture().log);
    assert.equal(read.state, undefined);
    assert.ok(isWorkbenchError(read.problem, 'STATE_UNREADABLE') && read.problem.message.includes(path), read.problem?.message);
  });
});

describe('updateToolState', () => {
  it('creates the directory and writes 2-space JSON with a trailing newline, enabled before disabled', async () => {
    const path = join(await freshDir(), 'nested', 'dir', 'tool-state.json');
    await update(path, { disable: ['a__b__c', 'x__*'] });
    assert.equal(await readFile(path, 'utf8'), '{\n  "enabled": [],\n  "disabled": [\n    "a__b__c",\n    "x__*"\n  ]\n}\n');
  });

  it('trims input names, drops blanks and removes duplicates', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    const result = await update(path, { disable: ['  a__b__c', 'a__b__c  ', '', '   ', 'd__e__f', 'a__b__c'] });
    assert.deepEqual(result.state, { enabled: [], disabled: ['a__b__c', 'd__e__f'] });
    assert.deepEqual(result.changed, { enabled: [], disabled: ['a__b__c', 'd__e__f'] });
    assert.deepEqual(await json(path), { enabled: [], disabled: ['a__b__c', 'd__e__f'] });
  });

  it('enable removes the name from disabled and does not start an allowlist when enabled is empty', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: [], disabled: ['a__b__c', 'd__e__f'] });
    const result = await update(path, { enable: ['a__b__c', 'g__h__i'] });
    assert.deepEqual(result.state, { enabled: [], disabled: ['d__e__f'] });
    assert.deepEqual(result.previous, { enabled: [], disabled: ['a__b__c', 'd__e__f'] });
    assert.deepEqual(result.changed, { enabled: ['a__b__c'], disabled: [] }, 'g__h__i was already enabled');
  });

  it('with an allowlist in force, enable adds to it and disable removes from it', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: ['a__b__c', 'a__b__d'], disabled: [] });
    let result = await update(path, { enable: ['x__y__z'] });
    assert.deepEqual(result.state, { enabled: ['a__b__c', 'a__b__d', 'x__y__z'], disabled: [] });
    result = await update(path, { disable: ['a__b__c'] });
    assert.deepEqual(result.state, { enabled: ['a__b__d', 'x__y__z'], disabled: ['a__b__c'] });
    assert.deepEqual(await json(path), result.state);
  });

  it('disabling the only allowlisted name keeps the allowlist (an empty list would enable everything)', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: ['a__b__c'], disabled: [] });
    const result = await update(path, { disable: ['a__b__c'] });
    assert.deepEqual(result.state, { enabled: ['a__b__c'], disabled: ['a__b__c'] });
  });

  it('applies disable after enable, so a name given to both ends up disabled', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    const result = await update(path, { enable: ['a__b__c'], disable: ['a__b__c'] });
    assert.deepEqual(result.state, { enabled: [], disabled: ['a__b__c'] });
  });

  it('records an exception for one tool under a disabled glob, and reports an enabled glob that stays covered', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: [], disabled: ['dev__*', 'ops__s__t'] });
    const result = await update(path, { enable: ['dev__s__t', 'ops__*', 'prod__s__t'] });
    assert.deepEqual(result.state, { enabled: [], disabled: ['dev__*', 'ops__s__t'], exceptions: ['dev__s__t'] });
    assert.deepEqual(result.excepted, [{ name: 'dev__s__t', patterns: ['dev__*'] }]);
    assert.deepEqual(result.stillDisabledBy, [{ name: 'ops__*', pattern: 'ops__s__t' }]);
    assert.deepEqual(result.changed.enabled, ['dev__s__t']);
    assert.deepEqual(await json(path), { enabled: [], disabled: ['dev__*', 'ops__s__t'], exceptions: ['dev__s__t'] });
  });

  it('a disable that covers an exception removes it; reset clears exceptions', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, `${JSON.stringify({ enabled: [], disabled: ['dev__*'], exceptions: ['dev__s__t', 'dev__s__u'] }, null, 2)}\n`);
    const result = await update(path, { disable: ['dev__s__t'] });
    assert.deepEqual(result.state, { enabled: [], disabled: ['dev__*', 'dev__s__t'], exceptions: ['dev__s__u'] });
    assert.deepEqual((await update(path, { reset: true })).state, { enabled: [], disabled: [] });
    assert.deepEqual(await json(path), { enabled: [], disabled: [], exceptions: [] });
  });

  it('reset writes the defaults and reports the cleared disabled entries', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: ['a__b__c'], disabled: ['x__*'] });
    const result = await update(path, { reset: true });
    assert.deepEqual(result.state, { enabled: [], disabled: [] });
    assert.deepEqual(result.changed, { enabled: ['x__*'], disabled: [] });
    assert.equal(await readFile(path, 'utf8'), '{\n  "enabled": [],\n  "disabled": []\n}\n');
  });

  it('lists names that knownNames rejects as unknown, and keeps them', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    const result = await updateToolState(
      path,
      { disable: ['a__b__c', 'not__yet__there'], enable: ['new__*'] },
      { log: capture().log, knownNames: (name) => name === 'a__b__c' },
    );
    assert.deepEqual(result.unknown.sort(), ['new__*', 'not__yet__there']);
    assert.deepEqual(result.state.disabled, ['a__b__c', 'not__yet__there']);
  });

  it('rejects a name that is neither canonical nor a glob, and writes nothing', async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    await assert.rejects(update(path, { disable: ['github'] }), (e) => isWorkbenchError(e, 'INVALID_NAME') && e.message.includes('"github"'));
    assert.deepEqual(await readdir(dir), []);
  });

  it('keeps unknown keys and the layout of the file, and warns about the keys', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await writeFile(path, '{"future": {"x": 1}, "disabled": [], "enabled": [], "__proto__": "kept"}');
    const { log, warnings } = capture();
    await update(path, { disable: ['a__b__c'] }, log);
    assert.equal(await readFile(path, 'utf8'), '{"future": {"x": 1}, "disabled": ["a__b__c"], "enabled": [], "__proto__": "kept"}');
    assert.equal(warnings().length, 1);
  });

  it('changes a JSONC file in place: comments, trailing commas and other entries stay as written', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await writeFile(
      path,
      '// Tools I keep off.\n{\n  "enabled": [],\n  "disabled": [\n    // writes to disk\n    "dev__fs__write_*", // until reviewed\n    "dev__memory__delete_*",\n  ],\n}\n',
    );
    await update(path, { enable: ['dev__memory__delete_*'], disable: ['ops__k8s__apply'] });
    assert.equal(
      await readFile(path, 'utf8'),
      '// Tools I keep off.\n{\n  "enabled": [],\n  "disabled": [\n    // writes to disk\n    "dev__fs__write_*", // until reviewed\n    "ops__k8s__apply",\n  ],\n}\n',
    );
    await update(path, { reset: true });
    assert.equal(await readFile(path, 'utf8'), '// Tools I keep off.\n{\n  "enabled": [],\n  "disabled": [\n    // writes to disk\n  ],\n}\n');
  });

  it('writes nothing when the file already says so', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, '{"disabled": ["a__b__c"]} // mine\n');
    await utimes(path, new Date(0), new Date(0));
    const result = await update(path, { disable: ['a__b__c'] });
    assert.deepEqual(result.changed, { enabled: [], disabled: [] });
    assert.equal((await lstat(path)).mtimeMs, 0, 'not rewritten');
  });

  for (const [label, content] of [
    ['truncated', '{"disabled": ["a__b__c"]'],
    ['a key written twice', '{"disabled": ["a__b__c"], "disabled": []}'],
  ] as const) {
    it(`refuses to change a broken file (${label}), naming file and line:column, and never overwrites it`, async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      await writeFile(path, content);
      for (const change of [{ disable: ['d__e__f'] }, { enable: ['a__b__c'] }, { reset: true }]) {
        await assert.rejects(
          update(path, change),
          (e) => e instanceof StateFileError && e.code === 'STATE_INVALID' && e.message.includes(`${path} is invalid at line 1, column`) && /Nothing was changed/.test(e.message),
        );
      }
      assert.equal(await readFile(path, 'utf8'), content);
      assert.deepEqual(await readdir(dir), ['tool-state.json'], 'no copy, no lock, no temp file');
    });
  }

  it('follows a symlinked state file instead of replacing the link', async () => {
    const dir = await freshDir();
    const real = join(dir, 'real.json');
    const link = join(dir, 'tool-state.json');
    await write(real, { enabled: [], disabled: [] });
    await symlink(real, link);
    await update(link, { disable: ['a__b__c'] });
    assert.ok((await lstat(link)).isSymbolicLink());
    assert.equal(await readlink(link), real);
    assert.deepEqual(await json(real), { enabled: [], disabled: ['a__b__c'] });
  });

  it('a symbolic link whose target is gone is no file to read as the defaults, nor one to replace: both refuse, naming the link', async () => {
    const dir = await freshDir();
    const link = join(dir, 'tool-state.json');
    await symlink(join(dir, 'moved-away', 'tool-state.json'), link);
    const read = await readToolState(link, capture().log);
    assert.equal(read.problem?.code, 'STATE_UNREADABLE');
    assert.match(read.problem?.message ?? '', /is a symbolic link to .*moved-away.*, which does not exist\. Restore the file the link points to/);
    await assert.rejects(update(link, { disable: ['a__b__c'] }), (error: unknown) => isWorkbenchError(error, 'STATE_UNREADABLE') && /Nothing was changed/.test(error.message));
    assert.ok((await lstat(link)).isSymbolicLink(), 'the link is left as it was');
  });

  it('a folder on its path that is a symbolic link to a folder moved away is refused the same way', async () => {
    const dir = await freshDir();
    await symlink(join(dir, 'dotfiles-moved-away'), join(dir, 'config'));
    const read = await readToolState(join(dir, 'config', 'tool-state.json'), capture().log);
    assert.equal(read.problem?.code, 'STATE_UNREADABLE');
    assert.match(read.problem?.message ?? '', /config, a folder on its path, is a symbolic link to .*dotfiles-moved-away, which does not exist/);
    // A path simply not there (no link on it) is still the defaults.
    assert.deepEqual((await readToolState(join(dir, 'nowhere', 'tool-state.json'), capture().log)).state, { enabled: [], disabled: [] });
  });

  it('fails with STATE_UNWRITABLE naming the path and the fix, leaving the previous file untouched', async (t) => {
    const dir = await freshDir();
    const stateDir = join(dir, 'state');
    await mkdir(stateDir);
    const path = join(stateDir, 'tool-state.json');
    const previous = '{\n  "enabled": [],\n  "disabled": [\n    "keep__me__please"\n  ]\n}\n';
    await writeFile(path, previous);
    await chmod(stateDir, 0o500);
    let effective = true;
    try {
      await writeFile(join(stateDir, 'probe'), '');
      await unlink(join(stateDir, 'probe'));
    } catch {
      effective = false;
    }
    const check = (e: unknown, target: string): boolean =>
      isWorkbenchError(e, 'STATE_UNWRITABLE') && e.message.includes(target) && /--state-file|WORKBENCH_STATE_FILE/.test(e.message);
    try {
      if (!effective) {
        await assert.rejects(update(path, { disable: ['a__b__c'] }), (e) => check(e, path));
        assert.equal(await readFile(path, 'utf8'), previous);
        assert.deepEqual(await readdir(stateDir), ['tool-state.json'], 'no temp or lock file left behind');
        return;
      }
    } finally {
      await chmod(stateDir, 0o700);
    }
    // Running as root: permission bits do not stop writes. Make the state file's parent a regular file instead, so
    // creating the directory / lock / temp file fails (ENOTDIR / EEXIST), and check that nothing was touched.
    t.diagnostic('running as root: chmod does not stop writes; using a regular file as the parent directory');
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, previous);
    const blocked = join(blocker, 'tool-state.json');
    await assert.rejects(update(blocked, { disable: ['a__b__c'] }), (e) => check(e, blocked));
    assert.equal(await readFile(blocker, 'utf8'), previous);
    assert.deepEqual((await readdir(dir)).sort(), ['not-a-dir', 'state']);
  });

  describe('lock', () => {
    // The lock is proper-lockfile's, so any process using that library on the same path is a fellow holder.
    const holdLock = (path: string): Promise<() => Promise<void>> => lockfile.lock(path, { realpath: false });

    it('breaks the lock of a process that was killed while holding it, and the update succeeds', async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      await write(path, { enabled: [], disabled: ['keep__me__x'] });
      const holder = spawn(
        process.execPath,
        ['-e', `require('proper-lockfile').lock(${JSON.stringify(path)}, { realpath: false }).then(() => console.log('locked')); setInterval(() => {}, 1000);`],
        { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
        holder.on('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
      });
      const exited = new Promise((r) => holder.once('exit', r));
      holder.kill('SIGKILL');
      await exited;
      assert.ok((await readdir(dir)).includes('tool-state.json.lock'), 'the killed holder left its lock behind');
      const result = await updateToolState(path, { disable: ['a__b__c'] }, { log: capture().log, lockStaleMs: 2_000 });
      assert.deepEqual(result.state.disabled, ['keep__me__x', 'a__b__c']);
      assert.deepEqual(await readdir(dir), ['tool-state.json'], 'the lock was released');
    });

    it('waits for a live lock and proceeds once it is released', async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      const release = await holdLock(path);
      let settled = false;
      const updating = updateToolState(path, { disable: ['a__b__c'] }, { log: capture().log, lockTimeoutMs: 10_000 }).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 200)); // a window in which nothing may happen: the update waits while the lock is held
      assert.equal(settled, false, 'the update waited for the holder');
      await release();
      const result = await updating;
      assert.deepEqual(result.state.disabled, ['a__b__c']);
    });

    it('fails after the timeout with an error naming the lock file and what to do; the state is untouched', async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      await write(path, { enabled: [], disabled: ['keep__me__x'] });
      const release = await holdLock(path);
      try {
        await assert.rejects(
          updateToolState(path, { disable: ['a__b__c'] }, { log: capture().log, lockTimeoutMs: 300 }),
          (e) => isWorkbenchError(e, 'STATE_UNWRITABLE') && e.message.includes(`${path}.lock`) && /delete/.test(e.message),
        );
        assert.deepEqual(await json(path), { enabled: [], disabled: ['keep__me__x'] });
        assert.ok((await readdir(dir)).includes('tool-state.json.lock'), "someone else's live lock is never removed");
      } finally {
        await release();
      }
    });

    it('removes a stale lock file left by an earlier version, and the update succeeds', async () => {
      const dir = await freshDir();
      const path = join(dir, 'tool-state.json');
      await write(path, { enabled: [], disabled: ['keep__me__x'] });
      await writeFile(`${path}.lock`, '{"pid": 1}');
      const old = new Date(Date.now() - 60_000);
      await utimes(`${path}.lock`, old, old);
      const { log, warnings } = capture();
      const result = await updateToolState(path, { disable: ['a__b__c'] }, { log });
      assert.deepEqual(result.state.disabled, ['keep__me__x', 'a__b__c']);
      assert.ok(warnings().some((w) => w.includes(`${path}.lock`)), warnings().join(''));
      assert.deepEqual(await readdir(dir), ['tool-state.json']);
    });

    it('loses no update when many updates race to break the same stale lock', async () => {
      // Each round: a stale lock (a crashed holder's) and 20 updates at once, all of which see it stale. Breaking it
      // without care lets one updater remove the fresh lock another just took, and both write.
      for (let round = 0; round < 10; round++) {
        const dir = await freshDir();
        const path = join(dir, 'tool-state.json');
        await mkdir(`${path}.lock`);
        const old = new Date(Date.now() - 60_000);
        await utimes(`${path}.lock`, old, old);
        const names = Array.from({ length: 20 }, (_, i) => `tb__race__t${i}`);
        await Promise.all(names.map((name) => updateToolState(path, { disable: [name] }, { log: capture().log })));
        const state = (await json(path)) as ToolState;
        assert.deepEqual([...state.disabled].sort(), [...names].sort(), `round ${round}`);
        assert.deepEqual(await readdir(dir), ['tool-state.json'], 'no lock left behind');
      }
    });
  });

  it('loses no update when two processes each make 100 concurrent changes', { timeout: 180_000 }, async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    const runToggler = (prefix: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', toggler, path, prefix, '100'], {
          cwd: projectRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });

    // Meanwhile, read (as a server would) and watch: no reader may ever see a partial or corrupt file.
    const { log, warnings } = capture();
    const seen: ToolState[] = [];
    const watcher = watchToolState(path, (s) => seen.push(s), log, { intervalMs: 20 });
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        await readToolState(path, log);
        reads++;
        await new Promise((r) => setTimeout(r, 5)); // pacing between reads, not a wait for anything
      }
    })();

    const results = await Promise.all([runToggler('a'), runToggler('b')]);
    reading = false;
    await reader;
    watcher.close();

    for (const r of results) assert.equal(r.code, 0, `toggler failed: ${r.stderr}`);
    const state = (await json(path)) as { enabled: string[]; disabled: string[] };
    const expected = ['a', 'b'].flatMap((p) => Array.from({ length: 100 }, (_, i) => `tb__${p}__t${i}`));
    const missing = expected.filter((name) => !state.disabled.includes(name));
    assert.deepEqual(missing, [], 'every update survived');
    assert.equal(state.disabled.length, 200, 'the shared name ends enabled (each worker ends with an enable)');
    assert.deepEqual(state.enabled, []);
    assert.deepEqual(warnings(), [], 'no reader saw a corrupt file');
    assert.ok(reads > 0 && seen.length > 0);
    assert.deepEqual((await readdir(dir)).sort(), ['tool-state.json'], 'no lock, temp or corrupt file left');
  });
});

describe('watchToolState', () => {
  const writeFromAnotherProcess = (path: string, content: string): Promise<unknown> =>
    run(process.execPath, [
      '-e',
      'const fs = require("fs"), p = require("path"); fs.mkdirSync(p.dirname(process.argv[1]), { recursive: true }); fs.writeFileSync(process.argv[1], process.argv[2]);',
      path,
      content,
    ]);

  it('reports a change written by another process, even if the directory did not exist at first', async () => {
    const path = join(await freshDir(), 'later', 'tool-state.json');
    const seen: ToolState[] = [];
    const { log, lines } = capture();
    const watcher = watchToolState(path, (s) => seen.push(s), log, { initial: { enabled: [], disabled: [] } });
    try {
      await writeFromAnotherProcess(path, '{"enabled": [], "disabled": ["a__b__c"]}');
      await waitFor(() => seen.length > 0, { timeoutMs: 5_000, what: 'the change' });
      assert.deepEqual(seen, [{ enabled: [], disabled: ['a__b__c'] }]);
      assert.deepEqual(lines, []);
    } finally {
      watcher.close();
    }
  });

  it('follows atomic replacements by updateToolState and reports only real content changes', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    await write(path, { enabled: [], disabled: ['a__b__c'] });
    const seen: ToolState[] = [];
    // Its baseline is the content as read before it started (no wait for a first poll).
    const watcher = watchToolState(path, (s) => seen.push(s), capture().log, { intervalMs: 50, initial: { enabled: [], disabled: ['a__b__c'] } });
    try {
      // Same content, different formatting: not a change.
      await writeFile(path, '{ "disabled": ["a__b__c"], "enabled": [] }');
      await new Promise((r) => setTimeout(r, 200)); // a window in which nothing may happen: no report of a reformatting
      assert.deepEqual(seen, []);
      await update(path, { disable: ['d__e__f'] });
      await waitFor(() => seen.length > 0, { timeoutMs: 5_000, what: 'the change' });
      await new Promise((r) => setTimeout(r, 200)); // a window in which nothing may happen: the change is reported once
      assert.deepEqual(seen, [{ enabled: [], disabled: ['a__b__c', 'd__e__f'] }]);
      // Deleting the file means the defaults.
      await unlink(path);
      await waitFor(() => seen.length > 1, { timeoutMs: 5_000, what: 'the deletion' });
      assert.deepEqual(seen[1], { enabled: [], disabled: [] });
    } finally {
      watcher.close();
    }
  });

  it('reports a file that turns broken (no state delivered), leaves it in place, and delivers the state once it is good', async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    await write(path, { enabled: [], disabled: ['a__b__c'] });
    const seen: ToolState[] = [];
    const problems: (string | undefined)[] = [];
    const watcher = watchToolState(path, (s) => seen.push(s), capture().log, {
      intervalMs: 50,
      settleMs: 100,
      initial: { enabled: [], disabled: ['a__b__c'] },
      onProblem: (broken) => problems.push(broken && `${broken.problem.code} ${broken.problem.location} ${broken.bytes?.toString('utf8')}`),
    });
    try {
      for (const [broken, location] of [
        ['not json', `${path}:1:1`],
        ['{"enabled": [], "disabled": ["a__b__c"], "disabled": []}', `${path}:1:42`],
      ] as const) {
        const before = problems.length;
        await writeFile(path, broken);
        await waitFor(() => problems.length > before, { timeoutMs: 5_000, what: 'the problem' });
        assert.equal(problems[before], `STATE_INVALID ${location} ${broken}`);
        assert.deepEqual(await readdir(dir), ['tool-state.json'], 'nothing is moved or written beside it');
      }
      assert.deepEqual(seen, [], 'no state was reported while broken');
      // Good again with the same content as before it broke: the state is still delivered, then the all-clear.
      await writeFile(path, '{"enabled": [], "disabled": ["a__b__c"],}');
      await waitFor(() => seen.length > 0, { timeoutMs: 5_000, what: 'the repaired state' });
      assert.deepEqual(seen, [{ enabled: [], disabled: ['a__b__c'] }]);
      await waitFor(() => problems.length === 3, { timeoutMs: 5_000, what: 'the all-clear' });
      assert.equal(problems[2], undefined);
    } finally {
      watcher.close();
    }
  });

  it('reports an unreadable file, and delivers the state of a file broken since start once it is good', async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    await writeFile(path, '{"disabled": [');
    const initial = await readToolState(path, capture().log);
    assert.ok(initial.problem);
    const seen: ToolState[] = [];
    const problems: (string | undefined)[] = [];
    const watcher = watchToolState(path, (s) => seen.push(s), capture().log, {
      intervalMs: 50,
      settleMs: 50,
      initial,
      onProblem: (broken) => problems.push(broken?.problem.code),
    });
    try {
      await rm(path);
      await mkdir(path);
      await waitFor(() => problems.length > 0, { timeoutMs: 5_000, what: 'the problem' });
      assert.deepEqual(problems, ['STATE_UNREADABLE'], 'the broken file it started with was not reported again');
      await rm(path, { recursive: true });
      await write(path, { enabled: [], disabled: [] });
      await waitFor(() => seen.length > 0, { timeoutMs: 5_000, what: 'the state' });
      assert.deepEqual(seen, [{ enabled: [], disabled: [] }], 'delivered although it equals the defaults');
      await waitFor(() => problems.length === 2, { timeoutMs: 5_000, what: 'the all-clear' });
    } finally {
      watcher.close();
    }
  });

  it('does not report a file that an editor is still saving', async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    await write(path, { enabled: [], disabled: [] });
    const seen: ToolState[] = [];
    const { log, warnings } = capture();
    // A long settle time so the second write always lands within it, however slow the machine.
    const watcher = watchToolState(path, (s) => seen.push(s), log, { intervalMs: 20, settleMs: 2_000, initial: { enabled: [], disabled: [] } });
    try {
      await writeFile(path, '{"enabled": [], "disab'); // half-written
      await new Promise((r) => setTimeout(r, 100)); // a window in which nothing may happen: the half-written file is not reported
      await writeFile(path, '{"enabled": [], "disabled": ["a__b__c"]}');
      await waitFor(() => seen.length > 0, { timeoutMs: 10_000, what: 'the saved content' });
      assert.deepEqual(seen, [{ enabled: [], disabled: ['a__b__c'] }]);
      assert.deepEqual(await readdir(dir), ['tool-state.json']);
      assert.deepEqual(warnings(), []);
    } finally {
      watcher.close();
    }
  });

  it('calls nothing after close()', async () => {
    const path = join(await freshDir(), 'tool-state.json');
    const seen: ToolState[] = [];
    const watcher = watchToolState(path, (s) => seen.push(s), capture().log, { intervalMs: 20, initial: { enabled: [], disabled: [] } });
    watcher.close();
    await write(path, { enabled: [], disabled: ['a__b__c'] });
    await new Promise((r) => setTimeout(r, 200)); // a window in which nothing may happen: no call after close()
    assert.deepEqual(seen, []);
  });
});

describe('keepCopy', () => {
  it('keeps one copy per distinct content beside the file, never replacing one', async () => {
    const dir = await freshDir();
    const path = join(dir, 'tool-state.json');
    const { log, warnings } = capture();
    const first = await keepCopy(path, Buffer.from('{"disabled": ['), log);
    assert.ok(first?.startsWith(`${path}.corrupt-`), first);
    assert.match(first!, /\.corrupt-[0-9TZ.-]+$/, 'the timestamp is safe in file names');
    assert.equal(await keepCopy(path, Buffer.from('{"disabled": ['), log), first, 'the same content: the same copy');
    const second = await keepCopy(path, Buffer.from('{"enabled": ['), log);
    assert.notEqual(second, first);
    assert.equal(await readFile(first!, 'utf8'), '{"disabled": [');
    assert.equal(await readFile(second!, 'utf8'), '{"enabled": [');
    assert.equal((await readdir(dir)).length, 2);
    assert.deepEqual(warnings(), []);
  });
});
