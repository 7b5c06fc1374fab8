import type { Tool } from '@modelcontextprotocol/client';
import type { ResolvedToolset } from '../catalog/toolsets.js';
import type { ClientManager } from '../clients/client-manager.js';
import type { WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { ToolEntry, ToolStatus, ToolStatusReport } from './tool-entry.js';
import { describeToolset, type ToolsetHost } from './toolset-routes.js';
import type { NextSteps } from './next-steps.js';

/** What the reports read of the workbench, for one scope's connections. */
export interface ReportSource {
  config: WorkbenchConfig;
  toolsets: ReadonlyMap<string, ResolvedToolset>;
  /** Every name open_toolbox accepts, for the error that names them. */
  catalogNames(): string[];
  manager: ClientManager;
  toolsetHost: ToolsetHost<ToolEntry>;
  /** Each tool of a toolbox's catalog with its status. */
  statusOf(toolbox: string): ToolStatus[];
  /** What an unknown toolbox's or toolset's error says to do next (see NextSteps). */
  steps: NextSteps;
}

/** Each server's live tools exactly as it listed them, and the servers that could not be listed. */
export interface ServerListings {
  listings: { toolbox: string; server: string; tools: Tool[] }[];
  failed: ToolStatusReport['servers_failed'];
}

/**
 * Each server's live tools as it listed them, for the given toolbox (or all). Connects what it must; failures are
 * reported, not thrown. @throws WorkbenchError TOOLBOX_NOT_FOUND for a toolbox not in the config.
 */
export async function serverListings(source: ReportSource, toolbox?: string): Promise<ServerListings> {
  const names = reportedToolboxes(source, toolbox);
  const opened = await Promise.all(names.map(async (name) => ({ name, result: await source.manager.openToolbox(name) })));
  const listings = opened.flatMap(({ name }) => source.manager.serverTools(name).map((s) => ({ toolbox: name, server: s.server, tools: s.tools })));
  const failed = opened.flatMap(({ name, result }) => result.failed.map((failure) => ({ toolbox: name, ...failure })));
  return { listings, failed };
}

/**
 * Every tool of the given toolbox (or of all toolboxes), enabled or not, with the source that disabled it, sorted by
 * name. Connects what it must; servers that fail are reported, not thrown.
 * @throws WorkbenchError TOOLBOX_NOT_FOUND for a toolbox not in the config.
 */
export async function listToolStatuses(source: ReportSource, toolbox?: string): Promise<ToolStatusReport> {
  // A toolset's name (open_toolbox and use_tool take one too): the tools it holds, with their statuses.
  if (toolbox !== undefined && !source.config.toolboxes.some((t) => t.name === toolbox) && source.toolsets.has(toolbox)) {
    const { unmatched: _unmatched, ...report } = await describeNamedToolset(source, toolbox);
    return report;
  }
  const names = reportedToolboxes(source, toolbox);
  const opened = await Promise.all(names.map(async (name) => ({ name, result: await source.manager.openToolbox(name) })));
  const report: ToolStatusReport = { tools: [], servers_failed: [] };
  for (const { name, result } of opened) {
    for (const failure of result.failed) report.servers_failed.push({ toolbox: name, ...failure });
    report.tools.push(...source.statusOf(name));
  }
  report.tools.sort((a, b) => a.name.localeCompare(b.name));
  return report;
}

/**
 * What a toolset resolves to: connects the servers it needs and returns each tool it holds with its status, plus the
 * patterns that matched no tool at all. @throws WorkbenchError TOOLBOX_NOT_FOUND for a toolset not in the config.
 */
export async function describeNamedToolset(source: ReportSource, name: string): Promise<ToolStatusReport & { unmatched: string[] }> {
  const toolset = source.toolsets.get(name);
  if (!toolset) {
    throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolset "${name}". Toolsets: ${(source.config.toolsets ?? []).map((t) => t.name).join(', ') || '(none configured)'}.`, { hint: source.steps.pickToolbox('list', 'toolset').hint });
  }
  return describeToolset(source.toolsetHost, toolset, (toolbox) => source.statusOf(toolbox));
}

/** The toolboxes a report covers: every one, or the one named. */
function reportedToolboxes(source: ReportSource, toolbox: string | undefined): string[] {
  if (toolbox === undefined) return source.config.toolboxes.map((t) => t.name);
  if (!source.config.toolboxes.some((t) => t.name === toolbox)) {
    const names = source.catalogNames().join(', ') || '(none configured)';
    throw new WorkbenchError('TOOLBOX_NOT_FOUND', `Unknown toolbox ${quoteClientText(toolbox)}. Available toolboxes and toolsets: ${names}.`, { hint: source.steps.pickToolbox('list', 'toolbox').hint });
  }
  return [toolbox];
}
