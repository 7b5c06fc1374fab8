import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

// Every answer is read by a model with a bounded context (README "open_toolbox", "Errors"): an entry of
// servers_failed says what was wrong (`error`) and what to do next (`hint`, and each `failure.problems[].fix`) once
// each, and a use_tool refusal of a server that cannot start says each thing once too.

interface Entry {
  server: string;
  error: string;
  code: string;
  hint?: string;
  failure?: { kind: string; problems?: { path: string; message: string; fix: string }[] };
}

const BROKEN = ['nocmd', 'noenv', 'hung', 'crash', 'remote'] as const;

/** What each broken server's `error` must name: what was wrong. */
const WRONG: Record<(typeof BROKEN)[number], RegExp> = {
  nocmd: /"no-such-command-for-test" was not found/,
  noenv: /FAILED_ENTRIES_UNSET_TOKEN/,
  hung: /did not complete the MCP handshake/,
  crash: /exited with code 3/,
  remote: /could not be reached: connection refused/,
};

/** A URL on which nothing listens: a port the system handed out and took back. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/mcp`;
}

async function config(): Promise<unknown> {
  return {
    // Past the hung server's connectTimeoutMs, so it is reported failed rather than still starting.
    openWaitMs: 20_000,
    toolboxes: {
      box: {
        description: 'a healthy server among broken ones',
        mcpServers: {
          ok: fixtureServer(),
          nocmd: { command: 'no-such-command-for-test', args: [] },
          noenv: { ...fixtureServer(), env: { TOKEN: '${FAILED_ENTRIES_UNSET_TOKEN}' } },
          hung: { ...fixtureServer('--never-initialize'), connectTimeoutMs: 4_000 },
          crash: fixtureServer('--crash-on-start', '3'),
          remote: { type: 'http', url: await refusedUrl() },
        },
      },
    },
  };
}

/** The sentences (and clauses) of a text, normalized, long enough to count as said. */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.;:!?])\s+|\n/)
    .map((s) => s.replace(/[\s.;:]+$/, '').trim().toLowerCase())
    .filter((s) => s.length >= 20);
}

/** Every sentence said more than once among `texts`, or a text found whole inside another. */
function repeated(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = texts.flatMap(sentences).filter((s) => seen.has(s) || !seen.add(s));
  const inside = texts.flatMap((a, i) => texts.filter((b, j) => i !== j && a.length >= 20 && b.includes(a)).map(() => a));
  return [...twice, ...inside];
}

function checkEntry(entry: Entry, label: string): void {
  const name = entry.server.replace(/^box\//, '') as (typeof BROKEN)[number];
  assert.match(entry.error, WRONG[name], `${label}: ${entry.server} names what was wrong: ${JSON.stringify(entry)}`);
  assert.ok(entry.hint && entry.hint.length > 0, `${label}: ${entry.server} names what to do next: ${JSON.stringify(entry)}`);
  // A problem's `message` is a fact as a field, as `exitCode` is: the error may name it. Its `fix` is what to do.
  const fixes = (entry.failure?.problems ?? []).map((p) => p.fix);
  if (name === 'noenv') assert.match(fixes.join(' '), /set FAILED_ENTRIES_UNSET_TOKEN in the environment/, `${label}: the fix is told`);
  const told = [entry.error, entry.hint, ...fixes];
  assert.deepEqual(repeated(told), [], `${label}: ${entry.server} says each thing once: ${JSON.stringify(entry, null, 1)}`);
  assert.ok(saidOnce(told.join(' ')), `${label}: ${entry.server} names the other servers and installing once: ${JSON.stringify(entry, null, 1)}`);
}

/** Whether the phrases every failure tends to repeat (the other servers; installing the command) occur at most once. */
function saidOnce(text: string): boolean {
  return [/other servers/gi, /\binstall/gi].every((phrase) => (text.match(phrase) ?? []).length <= 1);
}

function failed(result: CallToolResult): Entry[] {
  return (result.structuredContent as { servers_failed: Entry[] }).servers_failed;
}

for (const era of ERAS) {
  describe(`servers_failed and use_tool refusals say each thing once (${era}, stdio)`, () => {
    it('names what was wrong and what to do next, once, in open_toolbox, a search and use_tool', { timeout: 180_000 }, async () => {
      const wb = await startEra('stdio', era, await config());
      try {
        // A loaded machine may still be starting a server past the wait: open again until every broken one has failed.
        let entries: Entry[] = [];
        for (let i = 0; i < 5 && entries.length < BROKEN.length; i++) {
          const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'box' } })) as CallToolResult;
          entries = failed(opened);
          for (const entry of entries) checkEntry(entry, 'open_toolbox');
        }
        assert.deepEqual(entries.map((e) => e.server).sort(), [...BROKEN].sort(), 'every broken server is in servers_failed');

        const search = (await wb.client.callTool({ name: 'open_toolbox', arguments: { query: 'echo' } })) as CallToolResult;
        assert.notEqual(search.isError, true, textOf(search));
        for (const entry of failed(search)) checkEntry(entry, 'search');

        for (const server of BROKEN) {
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'box', tool_name: `box__${server}__echo`, arguments: { text: 'hi' } } })) as CallToolResult;
          assert.equal(result.isError, true, textOf(result));
          const text = textOf(result);
          assert.match(text, WRONG[server], `use_tool ${server} names what was wrong: ${text}`);
          const meta = (result._meta as Record<string, { hint?: string }>)['mcp-workbench/error']!;
          assert.ok(meta.hint && text.endsWith(meta.hint), `use_tool ${server}: the text ends with what to do next: ${text}`);
          assert.deepEqual(repeated([text]), [], `use_tool ${server} says each thing once: ${text}`);
          assert.ok(saidOnce(text), `use_tool ${server} names the other servers and installing once: ${text}`);
        }
      } finally {
        await wb.close();
      }
    });
  });
}
