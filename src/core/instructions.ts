import type { WorkbenchConfig } from '../config/types.js';

/** Human- and model-readable guidance for the `initialize` result. */
export function workbenchInstructions(config: WorkbenchConfig, budget: number, sessionToolsets: readonly string[] | undefined): string {
  const lines = [
    `MCP Workbench gives access to ${config.toolboxes.length} toolbox(es) of MCP tools through two tools:`,
    `1. open_toolbox {toolbox_name}: connects the toolbox's servers and returns its tools with their full input schemas, or, when they exceed ${budget} characters${config.toolboxes.some((t) => t.catalogBudget !== undefined && t.catalogBudget !== budget) ? ' (some toolboxes set their own budget)' : ''}, a compact index of every tool. Pass tools:[names] for the schemas of just those, or query:"words" (with or without toolbox_name) to search for the best matches.`,
    `2. use_tool {toolbox_name, tool_name, arguments}: calls one of those tools. Use the tool name exactly as open_toolbox returned it ({toolbox}__{server}__{tool}) and arguments that match its inputSchema.`,
    `Open a toolbox before using its tools. Toolboxes:`,
  ];
  const toolboxes = config.toolboxes.map((t) => `- ${t.name} (${t.servers.length} server${t.servers.length === 1 ? '' : 's'})${described(t.description)}`);
  lines.push(...listed(toolboxes, 'toolboxes'));
  if ((config.toolsets ?? []).length > 0) {
    lines.push(`Toolsets (named sets of tools across toolboxes; use a toolset name as toolbox_name in open_toolbox and use_tool):`);
    lines.push(...listed((config.toolsets ?? []).map((t) => `- ${t.name} (toolset)${described(t.description)}`), 'toolsets'));
  }
  if (sessionToolsets) lines.push(`This session is limited to the tools of toolset(s): ${sessionToolsets.join(', ')}.`);
  lines.push(`The list of toolboxes and toolsets can change while you work (the config is followed live); the toolbox_name parameter of open_toolbox always lists the current names.`);
  return lines.join('\n');
}

/** A description as the instructions show it: at most {@link DESCRIPTION_CHARS} characters (open_toolbox has it whole). */
const DESCRIPTION_CHARS = 200;
/** The characters the listed toolboxes (or toolsets) may take: the instructions stay short whatever the config holds. */
const LIST_CHARS = 8_000;

function described(description: string | undefined): string {
  if (!description) return '';
  return `: ${description.length <= DESCRIPTION_CHARS ? description : `${description.slice(0, DESCRIPTION_CHARS)}…`}`;
}

/** The lines that fit {@link LIST_CHARS}, then one counting the rest and naming where every name is. */
function listed(lines: readonly string[], what: string): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    used += line.length + 1;
    if (used > LIST_CHARS) return [...kept, `- … and ${lines.length - kept.length} more ${what} (the toolbox_name parameter of open_toolbox lists every name)`];
    kept.push(line);
  }
  return kept;
}
