import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkbenchError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { acquireLock, lockOptions } from '../../src/shared/file-lock.js';
import { TOOL_PINS_FILE, lockOwner, unwritable } from '../../src/state/file-errors.js';

const log = createLogger({ level: 'error' }, 'file-lock-test');

describe('file lock: its failures are worded by the file that owns it', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wb-file-lock-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a lock still held at the deadline fails with the owner\'s error, naming the lock and the subject', async () => {
    const path = join(dir, 'secrets.json');
    const owner = { subject: 'the secret store', failure: (problem: string, cause?: unknown) => new WorkbenchError('SECRET_STORE_FAILED', `Cannot change ${path}: ${problem}.`, { cause }) };
    const release = await acquireLock(path, lockOptions({}, log, true, owner));
    try {
      await assert.rejects(acquireLock(path, lockOptions({ lockTimeoutMs: 100 }, log, true, owner)), (error: unknown) => {
        assert.ok(error instanceof WorkbenchError);
        assert.equal(error.code, 'SECRET_STORE_FAILED');
        assert.match(error.message, /timed out after 100 ms waiting for the lock .*secrets\.json\.lock/);
        assert.match(error.message, /changing the secret store/);
        assert.doesNotMatch(error.message, /tool state/);
        return true;
      });
    } finally {
      await release();
    }
    // Released: the next one gets it at once.
    const again = await acquireLock(path, lockOptions({ lockTimeoutMs: 100 }, log, true, owner));
    await again();
  });

  it('a lock that cannot be created carries the system error as its cause', async () => {
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, '');
    const path = join(blocker, 'state.json');
    await assert.rejects(acquireLock(path, lockOptions({ lockTimeoutMs: 100 }, log, true, lockOwner(path))), (error: unknown) => {
      assert.ok(error instanceof WorkbenchError);
      assert.equal(error.code, 'STATE_UNWRITABLE');
      assert.match(error.message, /^Cannot change the tool state file .*state\.json: could not create the lock/);
      assert.match(error.message, /Make sure every parent of .* is a directory/);
      assert.ok(error.cause !== undefined);
      return true;
    });
  });

  it('the pins file is named as itself, not as the tool state file', () => {
    const error = unwritable('/x/tool-pins.json', 'write the new content', Object.assign(new Error('no space'), { code: 'ENOSPC' }), TOOL_PINS_FILE);
    assert.match(error.message, /^Cannot change the tool pins file \/x\/tool-pins\.json: could not write the new content: no space\. The tool pins file was not changed\. Free some disk space/);
  });
});
