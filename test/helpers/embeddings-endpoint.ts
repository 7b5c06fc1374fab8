import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { node, waitFor } from './workbench-process.js';

/**
 * The OpenAI-compatible embeddings endpoint of the tests (test/fixtures/embeddings-server.mjs), started on loopback:
 * deterministic vectors in which "photo" is near "image" although the words differ, and a log of every request.
 */

const fixture = fileURLToPath(new URL('../fixtures/embeddings-server.mjs', import.meta.url));
export const API_KEY = 'sk-test-0123456789abcdef';

export interface Endpoint {
  url: string;
  requests(): { path: string; auth: string | null; model: string; inputs: string[] }[];
  close(): Promise<void>;
}

/** Starts the fixture with `flags`, logging its requests to `dir/name.jsonl`; resolves once it listens. */
export async function startEndpoint(dir: string, name: string, ...flags: string[]): Promise<Endpoint> {
  const log = join(dir, `${name}.jsonl`);
  const child: ChildProcess = spawn(node, [fixture, '--log', log, ...flags], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  assert.ok(await waitFor(() => /EMBEDDINGS_LISTENING \d+/.test(out), 10_000), 'the embeddings fixture did not start');
  const port = Number(/EMBEDDINGS_LISTENING (\d+)/.exec(out)![1]);
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []),
    close: async () => {
      child.stdin!.end();
      await waitFor(() => child.exitCode !== null, 5_000);
    },
  };
}
