import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { TRANSPORTS, startOver, type TransportName } from '../helpers/both-transports.js';
import { startEra } from '../helpers/era-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// A config edit that does not parse keeps the previous config serving, with a `config_warning` on open_toolbox answers
// (README "Live reload"). The warning names the file, line and column, and never quotes the file: the line at fault
// may hold a secret (a token pasted into an env block), and the model's context is no place for it. The terminal log
// shows the line, with a caret under the fault, to the person who can fix it.

const SECRET = 'sk-live-0123456789abcdef-excerpt';

/**
 * Both protocol eras of client: one that makes the 2025 handshake (SDK v1), and one of MCP 2026-07-28 (SDK v2, pinned)
 * that declares itself on every request. The workbench decides the answer once for both (CONVENTIONS "One answer per
 * question"); these tests see that no era's path shows the line.
 */
const CLIENTS = ['handshake', 'modern'] as const;
type ClientEra = (typeof CLIENTS)[number];

/** What these tests need of a served workbench, whichever the era of its client. */
interface Served {
  configPath: string;
  stderr(): string;
  call(name: string, args: Record<string, unknown>): Promise<Pick<CallToolResult, 'content' | 'isError'>>;
  close(): Promise<void>;
}

/** The built workbench over `transport` with `args` after `serve --config <file>`, and one client of `era` on it. */
async function serve(era: ClientEra, transport: TransportName, config: unknown, args: string[] = []): Promise<Served> {
  if (era === 'handshake') return startOver(transport, config, args);
  const wb = await startEra(transport, 'modern', config, undefined, {}, { args });
  return {
    configPath: wb.configPath,
    stderr: wb.stderr,
    call: async (name, args) => (await wb.client.callTool({ name, arguments: args })) as CallToolResult,
    close: wb.close,
  };
}

const useTool = (wb: Served, toolbox: string, tool: string, args: Record<string, unknown>): ReturnType<Served['call']> =>
  wb.call('use_tool', { toolbox_name: toolbox, tool_name: tool, arguments: args });

/** Every (client era, transport) pair these tests run on. */
const PAIRS = CLIENTS.flatMap((era) => TRANSPORTS.map((transport) => ({ era, transport })));

/** The open_toolbox answer once it carries `config_warning` (the live reload has seen the bad edit). */
async function untilWarned(wb: Served): Promise<string> {
  let answer = '';
  const warned = await waitFor(async () => {
    answer = textOf(await wb.call('open_toolbox', { toolbox_name: 'dev' }));
    return answer.includes('config_warning');
  }, 15_000);
  assert.ok(warned, `the answer says the edit is not applied: ${answer}`);
  return answer;
}

for (const { era, transport } of PAIRS) {
  describe(`a config edit that does not parse (${era} client, ${transport})`, () => {
    it('is reported to the client by line and column without quoting the file; the terminal shows the line', async () => {
      const config = { toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } } };
      const wb = await serve(era, transport, config);
      try {
        assert.notEqual((await wb.call('open_toolbox', { toolbox_name: 'dev' })).isError, true);
        const broken = `{\n  "toolboxes": {\n    "dev": { "mcpServers": { "fx": { "command": "node", "env": { "TOKEN": "${SECRET}" } "args": [] } } }\n  }\n}\n`;
        await writeFile(wb.configPath, broken);
        const answer = await untilWarned(wb);
        assert.match(answer, /line 3, column \d+/);
        const seen = [
          answer,
          textOf(await wb.call('open_toolbox', { toolbox_name: 'nope' })),
          textOf(await useTool(wb, 'dev', 'dev__fx__echo', { text: 'hi' })),
        ];
        for (const text of seen) assert.ok(!text.includes(SECRET), `the client is never shown the line: ${text}`);
        assert.ok(await waitFor(async () => wb.stderr().includes(SECRET), 5_000), 'the terminal shows the line at fault');
      } finally {
        await wb.close();
      }
    });
  });
}

// A project file comes with a cloned repository: it may be a link to a file of the user's, or be made to fail to parse
// on a line of one. Whatever its bytes, a client is told only which file, line and column and that it must be fixed;
// the line itself is for the terminal log.

const PROJECT_SECRET = 'ghp_projectSecret0123456789abcdefXYZ';

for (const { era, transport } of PAIRS) {
  describe(`a project file that does not parse (${era} client, ${transport})`, () => {
    it('is reported to the client as the project file, line and column, never a byte of the line; the terminal names the line', async () => {
      const data = await tempDir();
      const projectPath = join(data.dir, '.mcp-workbench.json');
      await writeFile(projectPath, JSON.stringify({ disabledTools: [] }));
      const config = { toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } } };
      const wb = await serve(era, transport, config, ['--project', data.dir]);
      try {
        assert.notEqual((await wb.call('open_toolbox', { toolbox_name: 'dev' })).isError, true);
        // The fault is the first character of the secret (no quotes around it), as a line of ~/.secretrc would be.
        await writeFile(projectPath, `{\n  "disabledTools": [],\n  "token": ${PROJECT_SECRET}\n}\n`);
        const answer = await untilWarned(wb);
        assert.ok(answer.includes(`The project file ${JSON.stringify(projectPath).slice(1, -1)} is not valid JSON at line 3, column 12`), answer);
        const seen = [
          answer,
          textOf(await wb.call('open_toolbox', { toolbox_name: 'nope' })),
          textOf(await useTool(wb, 'dev', 'dev__fx__echo', { text: 'hi' })),
        ];
        for (const text of seen) {
          assert.ok(!text.includes(PROJECT_SECRET.slice(0, 6)), `the client is never shown the line: ${text}`);
          assert.doesNotMatch(text, /'g'|token '/, `not even the one character at fault: ${text}`);
        }
        assert.ok(await waitFor(async () => wb.stderr().includes(PROJECT_SECRET), 5_000), 'the terminal shows the line at fault');
        assert.match(wb.stderr(), /\n\s+3 \| .*ghp_projectSecret/);
      } finally {
        await wb.close();
        await data.cleanup();
      }
    });
  });
}
