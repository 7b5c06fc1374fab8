import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callOk, listToolsBytes, textOf } from '../lib/mcp.js';
import { emptySection, type PhaseContext } from '../lib/phase.js';
import { servers, startDirect, startWorkbench } from '../lib/processes.js';
import { target, type Section } from '../lib/report.js';
import { fourServers } from '../lib/servers-four.js';
import { fmtBytes, fmtRatio, fmtTokens, ratio } from '../lib/stats.js';

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * What a client puts in the model's context. Registering servers directly means every tool
 * of every server in tools/list; the workbench's tools/list is two tools whatever is behind it, plus the initialize
 * instructions, and the catalog comes only when a toolbox is opened.
 */
export async function contextPhase(ctx: PhaseContext): Promise<Section> {
  const section = emptySection('Context cost');
  const { entries, cleanup } = await fourServers();
  try {
    const big = servers.fixture('--tools', '1000');
    const direct: { name: string; tools: number; bytes: number }[] = [];
    for (const [name, entry] of Object.entries({ ...entries, 'fixture --tools 1000': big })) {
      ctx.log(`  tools/list of ${name} directly`);
      const d = await startDirect(`direct ${name}`, entry);
      try {
        const { tools, bytes } = await listToolsBytes(d.client);
        direct.push({ name, tools: tools.length, bytes });
      } finally {
        await d.close();
      }
    }
    const four = direct.slice(0, 4);
    const fourBytes = four.reduce((a, d) => a + d.bytes, 0);
    const fourTools = four.reduce((a, d) => a + d.tools, 0);
    const allBytes = direct.reduce((a, d) => a + d.bytes, 0);
    const allTools = direct.reduce((a, d) => a + d.tools, 0);

    ctx.log('  workbench tools/list, instructions and open_toolbox sizes');
    const wb = await startWorkbench('workbench context', {
      toolboxes: {
        dev: { description: 'four real servers', mcpServers: entries },
        scale: { description: 'a server with 1,000 tools', mcpServers: { fixture: big } },
      },
    });
    let listBytes: number;
    let instructionsBytes: number;
    const opened: { toolbox: string; tools: number; text: number; full: number }[] = [];
    try {
      listBytes = (await listToolsBytes(wb.client)).bytes;
      instructionsBytes = Buffer.byteLength(wb.client.getInstructions() ?? '');
      for (const toolbox of ['dev', 'scale']) {
        const result: CallToolResult = await callOk(wb.client, 'open_toolbox', { toolbox_name: toolbox });
        const tools = (result.structuredContent as { tools?: unknown[] } | undefined)?.tools?.length ?? 0;
        opened.push({ toolbox, tools, text: Buffer.byteLength(textOf(result)), full: bytesOf(result) });
      }
    } finally {
      await wb.close();
    }

    const row = (what: string, tools: string, bytes: number, note = ''): string[] => [what, tools, fmtBytes(bytes), fmtTokens(bytes), note];
    section.intro =
      'Bytes of JSON the client receives (tokens estimated as bytes / 4). "Direct" registers each server in the client, so its ' +
      'tools/list carries every tool; the workbench registers two tools and hands out a toolbox\'s catalog only through ' +
      '`open_toolbox`, when the model asks for it.';
    section.tables.push({
      head: ['What the client gets', 'Tools', 'Bytes', 'Tokens', 'Note'],
      rows: [
        ...direct.map((d) => row(`tools/list of ${d.name}, direct`, String(d.tools), d.bytes)),
        row('sum: the 4 servers registered directly', String(fourTools), fourBytes),
        row('sum: the 4 servers + the 1,000-tool fixture, directly', String(allTools), allBytes),
        row('tools/list of the workbench (2 toolboxes behind it)', '2', listBytes, `${fmtRatio(ratio(listBytes, fourBytes))} of the 4 servers direct`),
        row('initialize `instructions` of the workbench', '', instructionsBytes, 'also usually shown to the model'),
        ...opened.map((o) =>
          row(`open_toolbox "${o.toolbox}" (text content)`, String(o.tools), o.text, `whole result with structuredContent: ${fmtBytes(o.full)}`),
        ),
      ],
    });
    section.targets.push(target('workbench tools/list size', fmtBytes(listBytes), '≤ 2 KiB (2,048 B)', listBytes <= 2048));
    section.notes.push(
      'open_toolbox returns the catalog twice, as compact JSON text and as structuredContent (README, "Tool names and calls"); a client shows the model one of them, so the text size is the context cost.',
    );
    section.key = `tools/list ${listBytes} B (direct 4 servers ${fourBytes} B), instructions ${instructionsBytes} B, open dev ${opened[0]?.text ?? NaN} B`;
    return section;
  } finally {
    await cleanup();
  }
}
