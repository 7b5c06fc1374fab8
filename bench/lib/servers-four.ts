import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servers, type ServerEntry } from './processes.js';

/** The four real servers of the "open a toolbox of 4 servers" target, with their data in a temp dir. */
export async function fourServers(): Promise<{ entries: Record<string, ServerEntry>; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'wb-bench-four-'));
  const root = join(dir, 'files');
  await mkdir(root);
  await writeFile(join(root, 'readme.txt'), 'a file for server-filesystem\n');
  return {
    entries: {
      everything: servers.everything(),
      memory: servers.memory(join(dir, 'memory.jsonl')),
      filesystem: servers.filesystem(root),
      fixture: servers.fixture(),
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
