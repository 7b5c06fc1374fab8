import type { ToolOverrideRule, ToolsetConfig } from './types.js';
import { isRecord } from './text.js';

/**
 * The parts of the config that describe the catalog rather than launch anything — toolsets and tool overrides —
 * normalised the same way wherever they are written (the config, a toolbox, a server, the project file). Input has
 * passed schema validation already.
 */

export interface RawToolOverride {
  title?: string;
  description?: string;
  descriptionSuffix?: string;
  annotations?: Record<string, unknown>;
}

export interface RawToolset {
  description?: string;
  tools: string[];
}

/** `{ "<pattern>": { … } }` → rules in file order; comment keys (`_…`, `$…`) inside an override are dropped. */
export function normaliseOverrides(raw: Record<string, RawToolOverride> | undefined): ToolOverrideRule[] {
  return Object.entries(raw ?? {}).map(([pattern, override]) => ({
    pattern,
    ...(override.title !== undefined && { title: override.title }),
    ...(override.description !== undefined && { description: override.description }),
    ...(override.descriptionSuffix !== undefined && { descriptionSuffix: override.descriptionSuffix }),
    ...(override.annotations !== undefined && { annotations: { ...override.annotations } }),
  }));
}

export function normaliseToolsets(raw: Record<string, RawToolset> | undefined, origin: ToolsetConfig['origin']): ToolsetConfig[] {
  return Object.entries(raw ?? {}).map(([name, toolset]) => ({
    name,
    description: toolset.description ?? '',
    tools: [...toolset.tools],
    origin,
  }));
}

/** Toolset names in `raw.toolsets` that are also toolbox names (a name is one or the other, never both). */
export function toolsetNameClashes(toolsets: unknown, toolboxNames: ReadonlySet<string>): string[] {
  if (!isRecord(toolsets)) return [];
  return Object.keys(toolsets).filter((name) => toolboxNames.has(name));
}

export function clashMessage(name: string, where: string): string {
  return `toolset "${name}" has the name of a toolbox${where}; a name is a toolbox or a toolset, never both. Rename the toolset`;
}
