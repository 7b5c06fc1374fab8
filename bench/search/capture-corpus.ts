/**
 * Captures the frozen search corpus: the `tools/list` of real npm MCP servers, each installed beforehand into its own
 * directory under `--from` (for example with `npm install --ignore-scripts PACKAGE` in `/tmp/corpus/pkgs/NAME`), started
 * with dummy credentials where a server wants some at start-up, and listed with the MCP SDK client. One JSON file per
 * server lands in bench/search/corpus/. Run by hand when the corpus is refreshed (README: "Search"), never in CI:
 *
 *   node --import tsx bench/search/capture-corpus.ts --from /tmp/corpus/pkgs
 */
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { listToolsBytes } from '../lib/mcp.js';
import { SERVERS, type CorpusServer } from './servers.js';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, 'corpus');

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function binOf(pkgDir: string, spec: CorpusServer): Promise<string> {
  const manifest = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin && (spec.bin ? manifest.bin[spec.bin] : Object.values(manifest.bin)[0]);
  if (!bin) throw new Error(`${spec.package} has no bin`);
  return join(pkgDir, bin);
}

async function capture(from: string, spec: CorpusServer, scratch: string): Promise<number> {
  const pkgDir = join(from, spec.package.replace(/[/@]/g, '_'), 'node_modules', spec.package);
  if (!existsSync(pkgDir)) throw new Error('not installed');
  const { version, description } = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { version: string; description?: string };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [await binOf(pkgDir, spec), ...(spec.args ?? []).map((a) => a.replace('$SCRATCH', scratch))],
    env: { PATH: process.env.PATH ?? '', HOME: scratch, ...spec.env },
    cwd: scratch,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'corpus-capture', version: '1' });
  const timer = setTimeout(() => void transport.close(), 45_000);
  try {
    await client.connect(transport);
    const { tools } = await listToolsBytes(client);
    const kept = tools.map(({ name, title, description, inputSchema, annotations }) => ({
      name,
      ...(title !== undefined && { title }),
      ...(description !== undefined && { description }),
      inputSchema,
      ...(annotations !== undefined && { annotations }),
    }));
    await writeFile(
      join(out, `${spec.name}.json`),
      `${JSON.stringify({ server: spec.name, package: spec.package, version, description: description ?? '', tools: kept }, null, 1)}\n`,
    );
    return kept.length;
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

const from = resolve(arg('--from') ?? '/tmp/corpus/pkgs');
const only = arg('--only');
const scratch = await mkdtemp(join(tmpdir(), 'corpus-'));
let total = 0;
for (const spec of SERVERS) {
  if (only && spec.name !== only) continue;
  try {
    const n = await capture(from, spec, scratch);
    total += n;
    console.log(`ok   ${spec.name.padEnd(24)} ${n} tools`);
  } catch (error) {
    console.log(`fail ${spec.name.padEnd(24)} ${(error as Error).message.slice(0, 160)}`);
  }
}
console.log(`${total} tools`);
process.exit(0);
