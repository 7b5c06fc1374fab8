import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS, type TransportName } from '../helpers/both-transports.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, node, startWorkbench, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// A legacy (SDK v1) client of the workbench, whose toolbox holds a legacy server (the v1 fixture) and a modern-only
// 2026-07-28 server (SDK v2 serveStdio, legacy: 'reject'): the workbench speaks each server's era, and a modern
// server's input requests (MRTR) reach the v1 client's own elicitation/sampling/roots handlers.

const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const CAPS = { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } };

interface Opened {
  client: Client;
  useTool(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

function config(spawnLog: string, legacyLog: string, modernEnv: Record<string, string> = {}): unknown {
  return {
    toolboxes: {
      mix: {
        mcpServers: {
          old: fixtureServer('--log', legacyLog),
          new: { command: node, args: [modernFixture], env: { FIXTURE_SPAWN_LOG: spawnLog, MODERN_FIXTURE_AS_LEGACY: '0', ...modernEnv } },
        },
      },
    },
  };
}

async function open(transport: TransportName, cfg: unknown, cacheDir: string): Promise<Opened> {
  const env = { MCP_WORKBENCH_CACHE_DIR: cacheDir };
  let client: Client;
  let close: () => Promise<void>;
  if (transport === 'stdio') {
    const wb = await startWorkbench(cfg, { env, clientCapabilities: CAPS });
    ({ client, close } = wb);
  } else {
    const wb = await startHttpWorkbench(cfg, ['--http', '0'], env);
    const session = await wb.connect({}, CAPS);
    client = session.client;
    close = async () => {
      await session.close().catch(() => {});
      await wb.stop();
    };
  }
  client.setRequestHandler(ElicitRequestSchema, async (request) => ({ action: 'accept', content: { answer: `yes to ${request.params.message}` } }));
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'test-model', content: { type: 'text', text: 'a sampled reply' } }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work/project', name: 'project' }] }));
  const useTool = (tool: string, args?: Record<string, unknown>) =>
    client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: tool, ...(args ? { arguments: args } : {}) } }) as Promise<CallToolResult>;
  return { client, useTool, close };
}

async function events(file: string): Promise<{ event: string; pid: number; server?: string }[]> {
  return fixtureEvents(file);
}

/** The catalog cache entries in `dir`, by server name. */
async function cacheEntries(dir: string): Promise<Map<string, { era?: { kind: string; discover?: { supportedVersions?: string[] } }; tools?: unknown[] }>> {
  // One file for a server's era, one per tool list (per credentials and client capabilities): merged per server here.
  const entries = new Map<string, { era?: { kind: string; discover?: { supportedVersions?: string[] } }; tools?: unknown[] }>();
  for (const file of await readdir(dir).catch(() => [] as string[])) {
    const parsed = JSON.parse(await readFile(join(dir, file), 'utf8')) as { server: string; kind: string; era?: { kind: string }; tools?: unknown[] };
    const entry = entries.get(parsed.server) ?? {};
    if (parsed.kind === 'era') entry.era = parsed.era;
    if (parsed.kind === 'tools') entry.tools = parsed.tools;
    entries.set(parsed.server, entry);
  }
  return entries;
}

for (const transport of TRANSPORTS) {
  describe(`protocol eras downstream, over ${transport}`, () => {
    it('calls every tool of a legacy and a modern-only server, relays MRTR input to the client, and starts each server once', async () => {
      const { dir, cleanup } = await tempDir();
      const spawnLog = join(dir, 'spawns.jsonl');
      const legacyLog = join(dir, 'legacy.jsonl');
      const cacheDir = join(dir, 'cache');
      const wb = await open(transport, config(spawnLog, legacyLog), cacheDir);
      try {
        const catalog = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mix' } })) as CallToolResult;
        assert.notEqual(catalog.isError, true, textOf(catalog));
        assert.equal(textOf(await wb.useTool('mix__old__echo', { text: 'legacy hi' })), 'legacy hi');
        assert.equal(textOf(await wb.useTool('mix__new__echo', { text: 'modern hi' })), 'echo: modern hi');
        const asked = await wb.useTool('mix__new__ask', { question: 'ship it?' });
        assert.notEqual(asked.isError, true, textOf(asked));
        assert.equal(textOf(asked), 'answer: yes to ship it?');
        assert.equal(textOf(await wb.useTool('mix__new__sample', { prompt: 'hello' })), 'sampled: a sampled reply');
        assert.equal(textOf(await wb.useTool('mix__new__roots')), 'roots: file:///work/project');
        const spawns = (await events(spawnLog)).filter((e) => e.event === 'spawn');
        assert.equal(spawns.length, 1, 'the modern server was started once (the era probe ran in place)');
        assert.equal((await events(legacyLog)).filter((e) => e.event === 'start').length, 1, 'the legacy server was started once');
      } finally {
        await wb.close();
      }
      try {
        const entries = await cacheEntries(cacheDir);
        assert.equal(entries.get('new')?.era?.kind, 'modern');
        assert.deepEqual(entries.get('new')?.era?.discover?.supportedVersions, ['2026-07-28']);
        assert.equal(entries.get('old')?.era?.kind, 'legacy');
        // Second start with the era cache: one more start each, and no era probe at all.
        const again = await open(transport, config(spawnLog, legacyLog), cacheDir);
        try {
          assert.equal(textOf(await again.useTool('mix__new__echo', { text: 'again' })), 'echo: again');
          assert.equal(textOf(await again.useTool('mix__old__echo', { text: 'again' })), 'again');
        } finally {
          await again.close();
        }
        const log = await events(spawnLog);
        assert.equal(log.filter((e) => e.event === 'spawn').length, 2, 'one start per workbench run');
        assert.equal(log.filter((e) => e.event === 'discover').length, 1, 'only the first run probed the era');
        assert.equal((await events(legacyLog)).filter((e) => e.event === 'start').length, 2);
      } finally {
        await cleanup();
      }
    });
  });
}

describe('a remembered era that is wrong', () => {
  it('re-probes a server the cache calls modern that now speaks only the legacy protocol, and remembers it', async () => {
    const { dir, cleanup } = await tempDir();
    const spawnLog = join(dir, 'spawns.jsonl');
    const legacyLog = join(dir, 'legacy.jsonl');
    const cacheDir = join(dir, 'cache');
    try {
      const first = await open('stdio', config(spawnLog, legacyLog), cacheDir);
      try {
        assert.equal(textOf(await first.useTool('mix__new__echo', { text: 'x' })), 'echo: x');
      } finally {
        await first.close();
      }
      assert.equal((await cacheEntries(cacheDir)).get('new')?.era?.kind, 'modern');
      // Same launch key (env names, not values), but the program is now a legacy-only server.
      const downgraded = await open('stdio', config(spawnLog, legacyLog, { MODERN_FIXTURE_AS_LEGACY: '1' }), cacheDir);
      try {
        const result = await downgraded.useTool('mix__new__echo', { text: 'from legacy' });
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(textOf(result), 'from legacy');
      } finally {
        await downgraded.close();
      }
      assert.equal((await cacheEntries(cacheDir)).get('new')?.era?.kind, 'legacy', 'the verdict was updated');
    } finally {
      await cleanup();
    }
  });

  it('re-probes a server the cache calls legacy that now refuses the handshake (modern only), and remembers it', async () => {
    const { dir, cleanup } = await tempDir();
    const spawnLog = join(dir, 'spawns.jsonl');
    const cacheDir = join(dir, 'cache');
    try {
      const first = await open('stdio', config(spawnLog, join(dir, 'l.jsonl'), { MODERN_FIXTURE_AS_LEGACY: '1' }), cacheDir);
      try {
        assert.equal(textOf(await first.useTool('mix__new__echo', { text: 'x' })), 'x');
      } finally {
        await first.close();
      }
      assert.equal((await cacheEntries(cacheDir)).get('new')?.era?.kind, 'legacy');
      const upgraded = await open('stdio', config(spawnLog, join(dir, 'l.jsonl')), cacheDir);
      try {
        const result = await upgraded.useTool('mix__new__echo', { text: 'now modern' });
        assert.equal(textOf(result), 'echo: now modern', textOf(result));
      } finally {
        await upgraded.close();
      }
      assert.equal((await cacheEntries(cacheDir)).get('new')?.era?.kind, 'modern', 'the verdict was updated');
    } finally {
      await cleanup();
    }
  });

  it('starts a legacy server that exits on the era probe once more as legacy, and never probes it again', async () => {
    const { dir, cleanup } = await tempDir();
    const spawnLog = join(dir, 'spawns.jsonl');
    const cacheDir = join(dir, 'cache');
    const cfg = config(spawnLog, join(dir, 'l.jsonl'), { MODERN_FIXTURE_AS_LEGACY: 'exit-on-probe' });
    try {
      for (const run of [1, 2]) {
        const wb = await open('stdio', cfg, cacheDir);
        try {
          const result = await wb.useTool('mix__new__echo', { text: `run ${run}` });
          assert.equal(textOf(result), `run ${run}`, textOf(result));
        } finally {
          await wb.close();
        }
      }
      const log = await events(spawnLog);
      assert.equal(log.filter((e) => e.event === 'exit-on-probe').length, 1, 'probed once, on the first run');
      assert.equal(log.filter((e) => e.event === 'spawn').length, 3, 'two starts on the first run (probe, then legacy), one on the second');
      assert.equal((await cacheEntries(cacheDir)).get('new')?.era?.kind, 'legacy');
    } finally {
      await cleanup();
    }
  });

  it('ignores a catalog cache file whose era is not one it knows', async () => {
    const { dir, cleanup } = await tempDir();
    const cacheDir = join(dir, 'cache');
    try {
      const first = await open('stdio', config(join(dir, 's.jsonl'), join(dir, 'l.jsonl')), cacheDir);
      try {
        assert.equal(textOf(await first.useTool('mix__new__echo', { text: 'x' })), 'echo: x');
      } finally {
        await first.close();
      }
      for (const file of await readdir(cacheDir)) {
        const parsed = JSON.parse(await readFile(join(cacheDir, file), 'utf8')) as Record<string, unknown>;
        await writeFile(join(cacheDir, file), JSON.stringify({ ...parsed, era: { kind: 'future' } }));
      }
      const second = await open('stdio', config(join(dir, 's.jsonl'), join(dir, 'l.jsonl')), cacheDir);
      try {
        assert.equal(textOf(await second.useTool('mix__new__echo', { text: 'y' })), 'echo: y');
      } finally {
        await second.close();
      }
    } finally {
      await cleanup();
    }
  });
});

describe('modern input requests that cannot complete', () => {
  it('stops a server that asks for input round after round, naming it; refuses input the client cannot give', async () => {
    const { dir, cleanup } = await tempDir();
    const cacheDir = join(dir, 'cache');
    const wb = await open('stdio', config(join(dir, 's.jsonl'), join(dir, 'l.jsonl')), cacheDir);
    const bare = await startWorkbench(config(join(dir, 's2.jsonl'), join(dir, 'l2.jsonl')), { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir } });
    try {
      const nag = await wb.useTool('mix__new__nag');
      assert.equal(nag.isError, true);
      assert.match(textOf(nag), /tool "nag" on server "new" of toolbox "mix" asked the client for input 8 times without completing/);
      // A client without elicitation: the workbench declared none downstream, so the server's request is refused.
      const asked = await bare.useTool('mix', 'mix__new__ask', { question: 'q?' });
      assert.equal(asked.isError, true, textOf(asked));
      assert.match(textOf(asked), /server "new" of toolbox "mix"/);
    } finally {
      await bare.close();
      await wb.close();
      await cleanup();
    }
  });
});

describe('a private tool list', () => {
  it('is kept in the catalog cache as the last known index of its own credentials, beside the era', async () => {
    const { dir, cleanup } = await tempDir();
    const cacheDir = join(dir, 'cache');
    const spawnLog = join(dir, 's.jsonl');
    const cfg = {
      toolboxes: { mix: { mcpServers: { new: { command: node, args: [modernFixture, '--private'], env: { FIXTURE_SPAWN_LOG: spawnLog } } } } },
    };
    const wb = await open('stdio', cfg, cacheDir);
    try {
      assert.equal(textOf(await wb.useTool('mix__new__echo', { text: 'p' })), 'echo: p');
    } finally {
      await wb.close();
    }
    try {
      const entry = (await cacheEntries(cacheDir)).get('new');
      assert.equal(entry?.era?.kind, 'modern');
      // SDK v2 servers mark their lists private by default: kept, keyed by a hash of the server's credentials and the
      // client's capabilities (README "Catalog cache"), so it is never shown under other credentials.
      assert.ok(Array.isArray(entry?.tools) && entry.tools.length > 0, 'the private list is cached for these credentials');
    } finally {
      await cleanup();
    }
  });
});

describe('tool list changes of a modern server', () => {
  it('arrive on the subscriptions/listen stream and refresh the catalog', async () => {
    const { dir, cleanup } = await tempDir();
    const wb = await open('stdio', config(join(dir, 's.jsonl'), join(dir, 'l.jsonl')), join(dir, 'cache'));
    const names = async (): Promise<string[]> => {
      const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'mix' } })) as CallToolResult;
      return ((opened.structuredContent as { tools?: { original_name: string }[] }).tools ?? []).map((t) => t.original_name);
    };
    try {
      assert.ok(!(await names()).includes('grown_6'));
      assert.equal(textOf(await wb.useTool('mix__new__grow')), 'added grown_6');
      assert.ok(await waitFor(async () => (await names()).includes('grown_6'), 10_000), 'the new tool shows up in the catalog');
    } finally {
      await wb.close();
      await cleanup();
    }
  });
});
