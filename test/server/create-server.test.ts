import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OpenToolboxResult } from '../../src/core/tool-entry.js';
import {
  everythingServer,
  filesystemServer,
  fixtureServer,
  memoryServer,
  startWorkbench,
  tempDir,
  textOf,
  workbenchErrorCode,
  type RunningWorkbench,
} from '../helpers/workbench-process.js';
import { sampleArgs } from '../helpers/sample-args.js';

type Catalog = OpenToolboxResult;

async function open(wb: RunningWorkbench, toolbox: string): Promise<Catalog> {
  const result = (await wb.call('open_toolbox', { toolbox_name: toolbox })) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  const structured = result.structuredContent as Catalog;
  assert.deepEqual(JSON.parse(textOf(result)), structured, 'text and structuredContent carry the same catalog');
  return structured;
}

/** Connects an SDK client straight to a server, the baseline every proxied result is compared with. */
async function direct(server: { command: string; args: string[]; env?: Record<string, string> }): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ ...server, env: { PATH: process.env.PATH ?? '', ...server.env }, stderr: 'ignore' }));
  return client;
}

describe('the fixed surface and reference servers', () => {
  let wb: RunningWorkbench;
  let dataDir: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    dataDir = await tempDir();
    await mkdir(join(dataDir.dir, 'files'));
    await writeFile(join(dataDir.dir, 'files', 'greeting.txt'), 'hello from the filesystem server\n');
    wb = await startWorkbench({
      toolboxes: {
        demo: { description: 'Reference server with every feature', mcpServers: { everything: everythingServer() } },
        notes: { description: 'Knowledge graph', mcpServers: { memory: memoryServer(join(dataDir.dir, 'memory.jsonl')) } },
        files: { description: 'One directory', mcpServers: { filesystem: filesystemServer(join(dataDir.dir, 'files')) } },
      },
    });
  });
  after(async () => {
    await wb.close();
    await dataDir.cleanup();
  });

  it('shows exactly open_toolbox and use_tool, with truthful annotations', async () => {
    const { tools } = await wb.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['open_toolbox', 'use_tool']);
    const openTool = tools.find((t) => t.name === 'open_toolbox')!;
    const useTool = tools.find((t) => t.name === 'use_tool')!;
    assert.equal(openTool.annotations?.readOnlyHint, true);
    assert.equal(openTool.annotations?.destructiveHint, false);
    assert.equal(useTool.annotations?.readOnlyHint, false);
    assert.equal(useTool.annotations?.openWorldHint, true);
    assert.ok(openTool.annotations?.title && useTool.annotations?.title);
  });

  it('lists every toolbox with its description and server count in the initialize instructions', () => {
    const instructions = wb.client.getInstructions() ?? '';
    assert.match(instructions, /- demo \(1 server\): Reference server with every feature/);
    assert.match(instructions, /- notes \(1 server\): Knowledge graph/);
    assert.match(instructions, /- files \(1 server\): One directory/);
    assert.match(instructions, /open_toolbox/);
    assert.match(instructions, /use_tool/);
  });

  it('starts nothing until a toolbox is first needed', async () => {
    await wb.client.listTools();
    assert.deepEqual(await wb.descendants(), [], 'no downstream process before the first open');
  });

  it('returns schemas and annotations identical to the server\'s own tools/list', async () => {
    const catalog = await open(wb, 'demo');
    assert.deepEqual(catalog.servers_connected, ['everything']);
    assert.deepEqual(catalog.servers_failed, []);
    const baseline = await direct(everythingServer());
    try {
      const { tools } = await baseline.listTools();
      assert.equal(catalog.tools.length, tools.length);
      for (const tool of tools) {
        const entry = catalog.tools.find((t) => t.original_name === tool.name);
        assert.ok(entry, `tool ${tool.name} is in the catalog`);
        assert.equal(entry.name, `demo__everything__${tool.name}`);
        assert.equal(entry.toolbox_name, 'demo');
        assert.equal(entry.source_server, 'everything');
        assert.equal(entry.description, `[demo/everything] ${tool.description ?? ''}`.trimEnd());
        assert.deepEqual(entry.inputSchema, tool.inputSchema);
        assert.deepEqual(entry.outputSchema, tool.outputSchema);
        assert.deepEqual(entry.annotations, tool.annotations);
      }
      // structuredContent and image content come back exactly as the server sent them.
      for (const [name, args] of [
        ['get-structured-content', { location: 'New York' }],
        ['get-tiny-image', {}],
        ['get-annotated-message', { messageType: 'error', includeImage: true }],
        ['get-sum', { a: 2, b: 40 }],
      ] as const) {
        const viaWorkbench = await wb.useTool('demo', `demo__everything__${name}`, args);
        const directly = await baseline.callTool({ name, arguments: args });
        assert.deepEqual(viaWorkbench, directly, `${name} result is identical`);
      }
    } finally {
      await baseline.close();
    }
  });

  it('can call every tool open_toolbox returns, for every reference server (round trip)', async () => {
    for (const toolbox of ['demo', 'notes', 'files']) {
      const catalog = await open(wb, toolbox);
      assert.ok(catalog.tools.length > 3, `${toolbox} has tools`);
      for (const tool of catalog.tools) {
        const args =
          tool.original_name === 'trigger-long-running-operation' ? { duration: 0.2, steps: 2 } : sampleArgs(tool.inputSchema as never);
        const result = await wb.useTool(toolbox, tool.name, args);
        // The call reached the server: whatever the tool answered, the workbench did not refuse it.
        assert.equal(workbenchErrorCode(result), undefined, `${tool.name}: ${textOf(result)}`);
      }
    }
  });

  it('reads a real file through the filesystem server, exactly as a direct call does', async () => {
    const args = { path: join(dataDir.dir, 'files', 'greeting.txt') };
    const viaWorkbench = await wb.useTool('files', 'files__filesystem__read_text_file', args);
    assert.match(textOf(viaWorkbench), /hello from the filesystem server/);
    const baseline = await direct(filesystemServer(join(dataDir.dir, 'files')));
    try {
      assert.deepEqual(viaWorkbench, await baseline.callTool({ name: 'read_text_file', arguments: args }));
    } finally {
      await baseline.close();
    }
  });

  it('keeps one process per server however many toolboxes are opened again', async () => {
    await open(wb, 'demo');
    await open(wb, 'notes');
    assert.equal((await wb.descendants()).length >= 2, true);
    const before = await wb.descendants();
    await open(wb, 'demo');
    assert.deepEqual(await wb.descendants(), before);
  });
});

describe('use_tool name resolution and errors', () => {
  let wb: RunningWorkbench;

  before(async () => {
    wb = await startWorkbench({
      toolboxes: {
        faults: {
          description: 'fixture servers',
          mcpServers: {
            one: fixtureServer('--name', 'one'),
            two: { ...fixtureServer('--name', 'two'), disabledTools: ['crash'] },
          },
        },
        other: { mcpServers: { solo: fixtureServer() } },
      },
    });
  });
  after(() => wb.close());

  it('opens the toolbox on first use_tool and accepts the canonical name', async () => {
    const result = await wb.useTool('faults', 'faults__one__echo', { text: 'hi' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'hi' }]);
  });

  it('accepts a bare name when unique, and a -/_ variant when unique', async () => {
    assert.equal(textOf(await wb.useTool('faults', 'faults__one__dash_name', { a: 1 })), '{"a":1}');
    assert.equal(textOf(await wb.useTool('faults', 'faults__two__under-score', { b: 2 })), '{"b":2}');
    assert.equal(textOf(await wb.useTool('other', 'dotted.name', {})), '{}');
    assert.equal(textOf(await wb.useTool('other', 'has__double', { z: true })), '{"z":true}');
    assert.equal(textOf(await wb.useTool('other', 'other__solo__has__double', {})), '{}');
  });

  it('refuses an ambiguous bare name and lists the candidates', async () => {
    const result = await wb.useTool('faults', 'echo', { text: 'x' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /ambiguous/);
    assert.match(textOf(result), /faults__one__echo/);
    assert.match(textOf(result), /faults__two__echo/);
  });

  it('names the closest tools for an unknown name', async () => {
    const result = await wb.useTool('faults', 'faults__one__ecko', { text: 'x' });
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'TOOL_NOT_FOUND');
    assert.match(textOf(result), /Unknown tool "faults__one__ecko" in toolbox "faults"/);
    assert.match(textOf(result), /Closest names: faults__one__echo/);
    assert.match(textOf(result), /open_toolbox/);
  });

  it('names the servers of the toolbox when a canonical name has an unknown server', async () => {
    const result = await wb.useTool('faults', 'faults__three__echo', { text: 'x' });
    assert.equal(workbenchErrorCode(result), 'TOOL_NOT_FOUND');
    assert.match(textOf(result), /names server "three", which toolbox "faults" does not have\. Its servers: one, two/);
  });

  it('lists the toolboxes for an unknown toolbox', async () => {
    for (const result of [await wb.useTool('nope', 'x'), await wb.call('open_toolbox', { toolbox_name: 'nope' })]) {
      assert.equal(result.isError, true);
      assert.equal(workbenchErrorCode(result), 'TOOLBOX_NOT_FOUND');
      assert.match(textOf(result), /Unknown toolbox "nope"/);
      assert.match(textOf(result), /faults, other/);
    }
  });

  it('points to the right toolbox when a canonical name belongs to another', async () => {
    const result = await wb.useTool('faults', 'other__solo__echo', { text: 'x' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /belongs to toolbox "other"/);
  });

  it('says a pattern under another toolbox names no one tool, and where to see what it matches', async () => {
    const result = await wb.useTool('faults', 'other__solo__ech*', { text: 'x' });
    assert.equal(workbenchErrorCode(result), 'TOOL_NOT_FOUND');
    assert.doesNotMatch(textOf(result), /belongs to/);
    assert.match(textOf(result), /is a pattern under toolbox "other"/);
    assert.match(textOf(result), /open_toolbox with toolbox_name "other" and tools \["other__solo__ech\*"\]/);
    // The step it names works: the pattern finds the tool there.
    const opened = await wb.call('open_toolbox', { toolbox_name: 'other', tools: ['other__solo__ech*'] });
    assert.notEqual(opened.isError, true);
    assert.match(textOf(opened), /other__solo__echo/);
  });

  it('validates arguments against the tool schema before forwarding, listing every violation', async () => {
    const result = await wb.useTool('faults', 'faults__one__add', { a: 'one', c: 3 });
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'INVALID_ARGUMENTS');
    const text = textOf(result);
    assert.match(text, /faults__one__add/);
    assert.match(text, /\/a must be number/);
    assert.match(text, /must have required property 'b'/);
  });

  it('returns a downstream isError result as it came', async () => {
    const result = await wb.useTool('faults', 'faults__one__fail', { message: 'it broke' });
    assert.deepEqual(result, { content: [{ type: 'text', text: 'it broke' }], isError: true });
  });

  it('turns a downstream JSON-RPC error into an isError result carrying its message', async () => {
    const result = await wb.useTool('faults', 'faults__one__throw_jsonrpc', { code: -32603, message: 'database is locked' });
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'CALL_FAILED');
    assert.match(textOf(result), /database is locked/);
    assert.match(textOf(result), /tool "throw_jsonrpc" on server "one" of toolbox "faults"/);
  });

  it('turns structuredContent that breaks its own outputSchema into an isError result', async () => {
    const result = await wb.useTool('faults', 'faults__one__bad_output', {});
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'INVALID_OUTPUT');
    assert.match(textOf(result), /outputSchema/);
  });

  it('refuses a disabled tool and says which source disabled it', async () => {
    const result = await wb.useTool('faults', 'faults__two__crash', {});
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'TOOL_DISABLED');
    assert.match(textOf(result), /disabled/);
    assert.match(textOf(result), /source: config/);
    const catalog = await open(wb, 'faults');
    assert.equal(catalog.tools.some((t) => t.name === 'faults__two__crash'), false, 'hidden from open_toolbox');
    assert.equal(catalog.tools.some((t) => t.name === 'faults__one__crash'), true);
  });

  it('answers an unknown top-level tool with JSON-RPC -32602: a protocol fault', async () => {
    await assert.rejects(wb.client.callTool({ name: 'no_such_tool', arguments: {} }), (error: unknown) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.code, ErrorCode.InvalidParams);
      assert.match(error.message, /Unknown tool "no_such_tool".*open_toolbox, use_tool/);
      return true;
    });
  });

  it("refuses a meta-tool's malformed parameters with an isError result naming the problem and the signature", async () => {
    const expectRefused = async (name: string, args: Record<string, unknown>, pattern: RegExp, signature: RegExp): Promise<void> => {
      const result = (await wb.call(name, args)) as CallToolResult;
      assert.equal(result.isError, true, textOf(result));
      assert.equal(workbenchErrorCode(result), 'INVALID_PARAMETERS');
      assert.match(textOf(result), pattern);
      assert.match(textOf(result), signature);
    };
    const openToolbox = /Expected: open_toolbox \{ toolbox_name\?: string, tools\?: string\[\], query\?: string,.*\}\. Call open_toolbox again/;
    const useTool = /Expected: use_tool \{ toolbox_name: string, tool_name: string, arguments\?: object \}\. Call use_tool again/;
    await expectRefused('open_toolbox', {}, /"toolbox_name" must be a non-empty string/, openToolbox);
    await expectRefused('open_toolbox', { toolbox_name: 5 }, /"toolbox_name" must be a non-empty string, got a number/, openToolbox);
    await expectRefused('use_tool', { toolbox_name: 'faults', tool_name: 'x', arguments: [1] }, /"arguments" must be an object/, useTool);
    await expectRefused('use_tool', { toolbox_name: 'faults', tool_name: 'x', extra: 1 }, /unknown parameter "extra"/, useTool);
  });

  it('reports a crash mid-call with the exit code and stderr, then reconnects with a new process', async () => {
    const pidBefore = textOf(await wb.useTool('faults', 'faults__one__pid', {}));
    const result = await wb.useTool('faults', 'faults__one__crash', { code: 9 });
    assert.equal(result.isError, true);
    assert.equal(workbenchErrorCode(result), 'SERVER_EXITED');
    assert.match(textOf(result), /exited with code 9/);
    assert.match(textOf(result), /crashing on purpose/);
    const pidAfter = textOf(await wb.useTool('faults', 'faults__one__pid', {}));
    assert.notEqual(pidAfter, pidBefore, 'a new process serves the next call');
  });
});
