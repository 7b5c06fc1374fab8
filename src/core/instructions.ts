import type { WorkbenchConfig } from '../config/types.js';

/** Human- and model-readable guidance for the `initialize` result. */
export function workbenchInstructions(config: WorkbenchConfig, budget: number, sessionToolsets: readonly string[] | undefined): string {
  const lines = [
    `MCP Workbench gives access to ${config.toolboxes.length} toolbox(es) of MCP tools through two tools:`,
    `1. open_toolbox {toolbox_name}: connects the toolbox's servers and returns its tools with their full input schemas, or, when they exceed ${budget} characters, a compact index of every tool. Pass tools:[names] for the schemas of just those, or query:"words" (with or without toolbox_name) to search for the best matches.`,
    `2. use_tool {toolbox_name, tool_name, arguments}: calls one of those tools. Use the tool name exactly as open_toolbox returned it ({toolbox}__{server}__{tool}) and arguments that match its inputSchema.`,
    `Open a toolbox before using its tools. Toolboxes:`,
  ];
  for (const t of config.toolboxes) {
    const servers = `${t.servers.length} server${t.servers.length === 1 ? '' : 's'}`;
    lines.push(`- ${t.name} (${servers})${t.description ? `: ${t.description}` : ''}`);
  }
  if ((config.toolsets ?? []).length > 0) {
    lines.push(`Toolsets (named sets of tools across toolboxes; use a toolset name as toolbox_name in open_toolbox and use_tool):`);
    for (const t of config.toolsets ?? []) lines.push(`- ${t.name} (toolset)${t.description ? `: ${t.description}` : ''}`);
  }
  if (sessionToolsets) lines.push(`This session is limited to the tools of toolset(s): ${sessionToolsets.join(', ')}.`);
  lines.push(`The list of toolboxes and toolsets can change while you work (the config is followed live); the toolbox_name parameter of open_toolbox always lists the current names.`);
  return lines.join('\n');
}
