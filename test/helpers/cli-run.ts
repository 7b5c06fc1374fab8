import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import { node, paths, tempDir } from './workbench-process.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI (`dist/cli/main.js …args`) to completion without blocking this process, so a server the test
 * runs in-process (an HTTP fixture) keeps answering. Killed after a minute so a hang fails the test instead of the run.
 * With `input`, that text is piped on stdin (not a terminal); else stdin is closed. Use it, not the synchronous
 * `runCli`, while an HTTP client of a running workbench is open: a blocked event loop lets the server close the
 * client's idle keep-alive socket unseen, and the client's next request then fails ("fetch failed").
 */
export async function runCliAsync(args: string[], env: Record<string, string> = {}, options: { cwd?: string; input?: string } = {}): Promise<CliRun> {
  // A command that connects servers fills the catalog cache: a temp one unless the test gives its own, never the home.
  const cache = env.MCP_WORKBENCH_CACHE_DIR === undefined ? await mkdtemp(join(tmpdir(), 'wb-cli-cache-')) : undefined;
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(node, [paths.cli, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', ...(cache !== undefined ? { MCP_WORKBENCH_CACHE_DIR: cache } : {}), ...env },
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      if (options.input !== undefined) child.stdin!.end(options.input);
    });
  } finally {
    if (cache !== undefined) await rm(cache, { recursive: true, force: true });
  }
}

/**
 * A temp dir of each test's own, with a `home` folder in it (for HOME): made before and removed after every test of
 * the file that calls this at its top level. Read `.dir` inside a test.
 */
export function dirPerTest(prefix: string): { readonly dir: string } {
  const own = { dir: '' };
  let cleanup: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    const temp = await tempDir(prefix);
    cleanup = temp.cleanup;
    own.dir = temp.dir;
    await mkdir(join(own.dir, 'home'));
  });
  afterEach(() => cleanup?.());
  return own;
}
