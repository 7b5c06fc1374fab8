import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { errnoCode, errnoWords } from '../../src/shared/errno.js';
import { fsReason } from '../../src/shared/read-only.js';

/** A file that is not there is said in the same words by every file error of the product, not as Node's "ENOENT: …". */
describe('errnoWords', () => {
  it('says a missing file in words, for a read and for a write into a folder that is not there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wb-errno-'));
    try {
      const read = await readFile(join(dir, 'missing.json')).catch((error: unknown) => error);
      const write = await writeFile(join(dir, 'gone', 'file.json'), '{}').catch((error: unknown) => error);
      for (const error of [read, write]) {
        assert.equal(errnoCode(error), 'ENOENT');
        assert.equal(errnoWords(errnoCode(error)), 'there is no such file or directory');
        // Without the path of the system's message (an atomic write's temp file): callers name the real one.
        assert.equal(fsReason(error), 'there is no such file or directory (ENOENT)');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
