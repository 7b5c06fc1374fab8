import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SEARCH_QUERIES, isExpected } from './test/fixtures/search-queries.ts';
import { paths, node } from './test/helpers/workbench-process.ts';
const dir = mkdtempSync(join(tmpdir(), 'hits-'));
const cfg = join(dir, 'c.json');
writeFileSync(cfg, JSON.stringify({ toolboxes: {
  ref: { mcpServers: { everything: { command: node, args: [paths.everything, 'stdio'] }, memory: { command: node, args: [paths.memory], env: { MEMORY_FILE_PATH: join(dir, 'm.jsonl') } }, filesystem: { command: node, args: [paths.filesystem, dir] } } },
  big: { mcpServers: { fixture: { command: node, args: [paths.fixture, '--catalog', '300'] } } } } }));
const c = new Client({ name: 'x', version: '1' });
await c.connect(new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', cfg, '--no-catalog-cache'], stderr: 'ignore' }));
for (const q of SEARCH_QUERIES) {
  const r: any = await c.callTool({ name: 'open_toolbox', arguments: { query: q.query } });
  const tools = r.structuredContent.tools;
  const rank = tools.findIndex((t: any) => t.original_name && isExpected(q, t));
  if (rank !== 0) console.log(rank, q.query, '->', tools.slice(0, 3).map((t: any) => t.name).join(', '));
}
await c.close();
