import type { ToolboxConfig, ToolsetConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { compileGlob, type NameMatcher } from '../shared/glob.js';
import { NAME_SEPARATOR } from './names.js';

/**
 * Toolsets resolved against the configured toolboxes: which canonical names belong to a toolset, and which servers
 * must be connected to list its tools (only those a pattern could reach, so opening a small toolset never starts the
 * servers of toolboxes it does not use).
 */
export interface ResolvedToolset {
  config: ToolsetConfig;
  /** Whether a canonical name belongs to this toolset. */
  includes(canonical: string): boolean;
  /** `{ toolbox, server }` pairs any of its patterns could match, in config order. */
  servers: { toolbox: string; server: string }[];
  /** Patterns that can match no configured server at all (a typo in a toolbox or server name). */
  unreachable: string[];
}

export function resolveToolsets(config: WorkbenchConfig): Map<string, ResolvedToolset> {
  return new Map((config.toolsets ?? []).map((toolset) => [toolset.name, resolveToolset(toolset, config.toolboxes)]));
}

/**
 * One warning per toolset entry, and per project file `disabledTools` entry, that can match no tool because it names
 * no configured toolbox and server (a typo, a bare tool name, or a toolbox that was removed). Entries that reach a
 * server but match none of its tools are found only once it is connected: `tools list --toolset NAME` reports those.
 */
export function patternWarnings(config: WorkbenchConfig): string[] {
  const toolsets = [...resolveToolsets(config).values()].flatMap((toolset) =>
    toolset.unreachable.map((pattern) => `toolset "${toolset.config.name}": ${unreachableReason(pattern)}`),
  );
  return [...toolsets, ...projectPatternWarnings(config)];
}

/**
 * The patterns that name no configured toolbox and server, so they can match no tool: a bare tool name (`echo`), a
 * typo, a removed toolbox. Canonical-name rules only (`--disabled-tools`, the project file's `disabledTools`).
 */
export function unreachablePatterns(patterns: readonly string[], toolboxes: readonly ToolboxConfig[]): string[] {
  const prefixes = toolboxes.flatMap((toolbox) => toolbox.servers.map((server) => `${toolbox.name}${NAME_SEPARATOR}${server.name}${NAME_SEPARATOR}`));
  return patterns.filter((pattern) => !prefixes.some((prefix) => couldMatchPrefix(pattern, prefix)));
}

/** Why a pattern matches nothing and what to write instead: `"echo" names no configured toolbox and server (…)`. */
export function unreachableReason(pattern: string): string {
  const bare = !pattern.includes(NAME_SEPARATOR) && !/[*?]/.test(pattern);
  const instead = bare ? `; "*__*__${pattern}" means that tool of every server` : '';
  return `"${pattern}" names no configured toolbox and server, so it matches nothing (tool names are {toolbox}__{server}__{tool}${instead})`;
}

function projectPatternWarnings(config: WorkbenchConfig): string[] {
  const project = config.project;
  if (!project) return [];
  return unreachablePatterns(project.disabledTools, config.toolboxes).map((pattern) => `${project.source}: disabledTools ${unreachableReason(pattern)}`);
}

/**
 * Refuses toolset names the config (with its project file) does not define, naming the toolsets there are.
 * @throws WorkbenchError with `code`: `USAGE` for names the user typed at start (`--toolset`: exit 2, README "Command
 *   line"), `CONFIG_INVALID` when a config edit removed a toolset a running session is limited to (the edit is refused).
 */
export function refuseUnknownToolsets(config: WorkbenchConfig, names: readonly string[], code: 'USAGE' | 'CONFIG_INVALID'): void {
  const defined = (config.toolsets ?? []).map((t) => t.name);
  const missing = names.filter((name) => !defined.includes(name));
  if (missing.length === 0) return;
  throw new WorkbenchError(
    code,
    `--toolset names ${missing.map((n) => `"${n}"`).join(', ')}, which ${config.source} does not define (toolsets: ${defined.join(', ') || '(none)'}). Name one of them, or define it under "toolsets".`,
  );
}

/**
 * `--toolset`: the toolsets a session is limited to, as the visibility policy takes them.
 * @throws WorkbenchError `CONFIG_INVALID` naming each toolset the config no longer defines (see refuseUnknownToolsets).
 */
export function sessionToolsetFilter(config: WorkbenchConfig, names: readonly string[]): { name: string; includes(canonical: string): boolean }[] {
  refuseUnknownToolsets(config, names, 'CONFIG_INVALID');
  const resolved = resolveToolsets(config);
  return names.map((name) => ({ name, includes: resolved.get(name)!.includes }));
}

function resolveToolset(toolset: ToolsetConfig, toolboxes: readonly ToolboxConfig[]): ResolvedToolset {
  const matchers: NameMatcher[] = toolset.tools.map((pattern) => compileGlob(pattern));
  // A project toolset that narrows a config toolset: a tool (and a server) must be within the config's patterns too.
  const within = toolset.within?.map((pattern) => compileGlob(pattern));
  const reachable = new Set<string>();
  const servers: { toolbox: string; server: string }[] = [];
  for (const toolbox of toolboxes) {
    for (const server of toolbox.servers) {
      const prefix = `${toolbox.name}${NAME_SEPARATOR}${server.name}${NAME_SEPARATOR}`;
      const reaching = toolset.tools.filter((pattern) => couldMatchPrefix(pattern, prefix));
      if (reaching.length === 0) continue;
      for (const pattern of reaching) reachable.add(pattern);
      if (toolset.within && !toolset.within.some((pattern) => couldMatchPrefix(pattern, prefix))) continue;
      servers.push({ toolbox: toolbox.name, server: server.name });
    }
  }
  return {
    config: toolset,
    includes: (canonical) => matchers.some((match) => match(canonical)) && (within === undefined || within.some((match) => match(canonical))),
    servers,
    unreachable: toolset.tools.filter((pattern) => !reachable.has(pattern)),
  };
}

/**
 * Whether `pattern` could match some name that starts with `prefix`: the pattern's literal head (up to its first
 * wildcard) and the prefix must agree as far as both go. Conservative: it may say yes for a server whose tools the
 * pattern then does not match, never no for one it does.
 */
function couldMatchPrefix(pattern: string, prefix: string): boolean {
  const wildcard = pattern.search(/[*?]/);
  const head = wildcard === -1 ? pattern : pattern.slice(0, wildcard);
  const length = Math.min(head.length, prefix.length);
  if (head.slice(0, length) !== prefix.slice(0, length)) return false;
  // A literal name shorter than the prefix cannot start with it.
  return wildcard !== -1 || head.length > prefix.length;
}
