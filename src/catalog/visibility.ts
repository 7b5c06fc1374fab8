import { LRUCache } from 'lru-cache';
import type { WorkbenchConfig } from '../config/types.js';
import { compileGlob, type NameMatcher } from '../shared/glob.js';
import { formatToolName } from './names.js';

/** How many canonical names a policy remembers its verdict for. */
export const VISIBILITY_MEMO_SIZE = 4096;

/** `quarantine`: held because its definition is new or changed since approved (README "Pinned tool definitions"). */
export type DisabledSource = 'config' | 'project' | 'cli' | 'toolset' | 'state' | 'quarantine';

export type Visibility =
  | { enabled: true }
  | {
      enabled: false;
      source: DisabledSource;
      /** the pattern or setting that applied */
      rule: string;
      reason: string;
      /** `quarantine` of a server naming `${user:…}`: the user whose pins hold it (`tools approve --user`). */
      user?: string;
    };

export interface ToolState {
  enabled: readonly string[];
  disabled: readonly string[];
  /**
   * Canonical names that the globs of `disabled` do not cover (recorded by enabling one tool under a disabled glob);
   * an exact entry in `disabled` still wins. Absent when empty.
   */
  exceptions?: readonly string[];
}

export interface VisibilityInputs {
  config: WorkbenchConfig;
  /** `--disabled-tools` patterns (canonical names or globs). */
  cliDisabled?: readonly string[];
  /** The persisted state file's lists, if any. */
  state?: ToolState;
  /** `--toolset`: only tools of these toolsets are visible (already resolved against the config). */
  sessionToolsets?: readonly { name: string; includes(canonical: string): boolean }[];
}

export interface VisibilityPolicy {
  check(toolbox: string, server: string, tool: string): Visibility;
}

interface Rule {
  pattern: string;
  match: NameMatcher;
}

const rules = (patterns: readonly string[] | undefined): Rule[] =>
  (patterns ?? []).map((pattern) => ({ pattern, match: compileGlob(pattern) }));

const find = (list: readonly Rule[], ...names: string[]): Rule | undefined =>
  list.find((r) => names.some((n) => r.match(n)));

/** Every source's patterns, compiled once per policy. */
interface CompiledRules {
  /** Per `toolbox/server`: its toolFilters (if any) and the disabledTools of the server and its toolbox. */
  servers: Map<string, { filters?: Rule[]; disabled: Rule[] }>;
  project: Rule[];
  projectSource: string | undefined;
  cli: Rule[];
  sessionToolsets: VisibilityInputs['sessionToolsets'];
  stateDisabled: Rule[];
  stateEnabled: Rule[];
  stateExceptions: ReadonlySet<string>;
}

/**
 * Whether a tool is visible and callable, and if not, which source hid it. Decided from names alone, so `use_tool`
 * can refuse a disabled tool before anything is connected. Results are memoised per canonical name (the most recent
 * {@link VISIBILITY_MEMO_SIZE}: clients may send any name, and a long-running server must not grow with them); build a
 * new policy when the inputs (config, CLI flags, state) change rather than re-evaluating per call.
 */
export function createVisibilityPolicy(inputs: VisibilityInputs): VisibilityPolicy {
  const compiled = compileRules(inputs);
  const memo = new LRUCache<string, Visibility>({ max: VISIBILITY_MEMO_SIZE });
  return {
    check(toolbox, server, tool) {
      const canonical = formatToolName(toolbox, server, tool);
      let result = memo.get(canonical);
      if (!result) {
        result = evaluate(compiled, toolbox, server, tool, canonical);
        memo.set(canonical, result);
      }
      return result;
    },
  };
}

function compileRules(inputs: VisibilityInputs): CompiledRules {
  const servers = new Map<string, { filters?: Rule[]; disabled: Rule[] }>();
  for (const toolbox of inputs.config.toolboxes) {
    const toolboxDisabled = rules(toolbox.disabledTools);
    for (const server of toolbox.servers) {
      servers.set(`${toolbox.name}/${server.name}`, {
        filters: server.toolFilters ? rules(server.toolFilters) : undefined,
        disabled: [...rules(server.disabledTools), ...toolboxDisabled],
      });
    }
  }
  return {
    servers,
    project: rules(inputs.config.project?.disabledTools),
    projectSource: inputs.config.project?.source,
    cli: rules(inputs.cliDisabled),
    sessionToolsets: inputs.sessionToolsets,
    stateDisabled: rules(inputs.state?.disabled),
    stateEnabled: rules(inputs.state?.enabled),
    stateExceptions: new Set(inputs.state?.exceptions ?? []),
  };
}

/** The first source that hides the tool, in the order config, project file, CLI, toolset, state file; else enabled. */
function evaluate(compiled: CompiledRules, toolbox: string, server: string, tool: string, canonical: string): Visibility {
  return configVerdict(compiled, toolbox, server, tool, canonical) ?? sessionVerdict(compiled, canonical) ?? stateVerdict(compiled, canonical) ?? { enabled: true };
}

/** The config's toolFilters and disabledTools, then the project file's disabledTools. */
function configVerdict(compiled: CompiledRules, toolbox: string, server: string, tool: string, canonical: string): Visibility | undefined {
  const entry = compiled.servers.get(`${toolbox}/${server}`);
  if (entry?.filters && !find(entry.filters, tool, canonical)) {
    return {
      enabled: false,
      source: 'config',
      rule: 'toolFilters',
      reason: `not included by toolFilters of server "${server}" in toolbox "${toolbox}"`,
    };
  }
  const configRule = entry && find(entry.disabled, tool, canonical);
  if (configRule) {
    return {
      enabled: false,
      source: 'config',
      rule: configRule.pattern,
      reason: `disabled by "${configRule.pattern}" in disabledTools of the config`,
    };
  }
  const projectRule = find(compiled.project, canonical);
  if (projectRule) {
    return {
      enabled: false,
      source: 'project',
      rule: projectRule.pattern,
      reason: `disabled by "${projectRule.pattern}" in disabledTools of the project file ${compiled.projectSource ?? ''}`.trimEnd(),
    };
  }
  return undefined;
}

/** `--disabled-tools`, then `--toolset`. */
function sessionVerdict(compiled: CompiledRules, canonical: string): Visibility | undefined {
  const cliRule = find(compiled.cli, canonical);
  if (cliRule) {
    return { enabled: false, source: 'cli', rule: cliRule.pattern, reason: `disabled by --disabled-tools "${cliRule.pattern}"` };
  }
  const sessionToolsets = compiled.sessionToolsets;
  if (sessionToolsets && !sessionToolsets.some((t) => t.includes(canonical))) {
    const names = sessionToolsets.map((t) => t.name).join(', ');
    return { enabled: false, source: 'toolset', rule: names, reason: `not in the toolset(s) this session is limited to (--toolset ${names})` };
  }
  return undefined;
}

/** The state file's disabled list (less its exceptions), then its enabled allowlist. */
function stateVerdict(compiled: CompiledRules, canonical: string): Visibility | undefined {
  const { stateDisabled, stateEnabled } = compiled;
  // An exception lifts the globs of the disabled list for exactly that tool; its exact name there still applies.
  const stateRule = compiled.stateExceptions.has(canonical) ? stateDisabled.find((r) => r.pattern === canonical) : find(stateDisabled, canonical);
  if (stateRule) {
    return {
      enabled: false,
      source: 'state',
      rule: stateRule.pattern,
      reason: `disabled by "${stateRule.pattern}" in the state file's "disabled" list`,
    };
  }
  if (stateEnabled.length > 0 && !find(stateEnabled, canonical)) {
    return {
      enabled: false,
      source: 'state',
      rule: 'enabled',
      reason: `not in the state file's "enabled" allowlist`,
    };
  }
  return undefined;
}
