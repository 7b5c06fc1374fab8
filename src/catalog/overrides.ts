import type { Tool } from '@modelcontextprotocol/client';
import type { ToolOverride, ToolOverrideRule, WorkbenchConfig } from '../config/types.js';
import { compileGlob, type NameMatcher } from '../shared/glob.js';
import { formatToolName } from './names.js';

/**
 * `toolOverrides` from every place they can be written, resolved per tool: the server's (keyed by its own tool
 * name or the canonical name), then the toolbox's, then the project file's (canonical names). Later sources win
 * field by field; `descriptionSuffix`es accumulate in that order; annotations merge key by key.
 */
export type OverrideResolver = (toolbox: string, server: string, tool: string) => ToolOverride | undefined;

interface CompiledRule {
  rule: ToolOverrideRule;
  match: NameMatcher;
}

const compile = (rules: readonly ToolOverrideRule[]): CompiledRule[] => rules.map((rule) => ({ rule, match: compileGlob(rule.pattern) }));

export function createOverrideResolver(config: WorkbenchConfig): OverrideResolver {
  const project = compile(config.project?.toolOverrides ?? []);
  const perServer = new Map<string, { server: CompiledRule[]; toolbox: CompiledRule[] }>();
  for (const toolbox of config.toolboxes) {
    const toolboxRules = compile(toolbox.toolOverrides ?? []);
    for (const server of toolbox.servers) {
      perServer.set(`${toolbox.name}/${server.name}`, { server: compile(server.toolOverrides ?? []), toolbox: toolboxRules });
    }
  }
  const none = perServer.size === 0 || ([...perServer.values()].every((s) => s.server.length + s.toolbox.length === 0) && project.length === 0);
  return (toolbox, server, tool) => {
    if (none) return undefined;
    const canonical = formatToolName(toolbox, server, tool);
    const rules = perServer.get(`${toolbox}/${server}`);
    const applied = [
      ...(rules?.server.filter((r) => r.match(tool) || r.match(canonical)) ?? []),
      ...(rules?.toolbox.filter((r) => r.match(canonical)) ?? []),
      ...project.filter((r) => r.match(canonical)),
    ].map((r) => r.rule);
    if (applied.length === 0) return undefined;
    return applied.reduce<ToolOverride>((merged, rule) => {
      const suffix = [merged.descriptionSuffix, rule.descriptionSuffix].filter((s) => s !== undefined && s !== '').join(' ');
      return {
        ...merged,
        ...(rule.title !== undefined && { title: rule.title }),
        ...(rule.description !== undefined && { description: rule.description }),
        ...(suffix !== '' && { descriptionSuffix: suffix }),
        ...(rule.annotations !== undefined && { annotations: { ...merged.annotations, ...rule.annotations } }),
      };
    }, {});
  };
}

/** What open_toolbox shows for `tool` once `override` applies: title, description and annotations. */
export function overriddenText(tool: Tool, override: ToolOverride | undefined): { title?: string; description: string; annotations?: Tool['annotations'] } {
  const title = override?.title ?? tool.title ?? tool.annotations?.title;
  const base = override?.description ?? tool.description ?? '';
  const description = override?.descriptionSuffix ? `${base} ${override.descriptionSuffix}`.trim() : base;
  const annotations = override?.annotations ? ({ ...tool.annotations, ...override.annotations } as Tool['annotations']) : tool.annotations;
  return { ...(title !== undefined && { title }), description, ...(annotations !== undefined && { annotations }) };
}
