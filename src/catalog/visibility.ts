import { LRUCache } from 'lru-cache';
import type { WorkbenchConfig } from '../config/types.js';
import { compileGlob, type NameMatcher } from '../shared/glob.js';
import { formatToolName } from './names.js';

/**
 * Whether a tool is visible and callable, and if not, which source hid it. Decided from names alone, so `use_tool`
 * can refuse a disabled tool before anything is connected. Results are memoised per canonical name (the most recent
 * {@link VISIBILITY_MEMO_SIZE}: clients may send any name, and a long-running server must not grow with them); build a
 * new policy when the inputs (config, CLI flags, state) change rather than re-evaluating per call.
 */
/** How many canonical names a policy remembers its verdict for. */
export const VISIBILITY_MEMO_SIZE = 4096;

/** `quarantine`: held because its definition is new or changed since approved (README "Pinned tool definitions"). */
export type DisabledSource = 'config' | 'project' | 'cli' | 'toolset' | 'state' | 'quarantine';

export type Visibility =
  | { enabled: true }
  | { enabled: false; source: DisabledSource; /** the pattern or setting that applied */ rule: string; reason: string };

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

export function createVisibilityPolicy(inputs: VisibilityInputs): VisibilityPolicy {
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
  const project = rules(inputs.config.project?.disabledTools);
  const cli = rules(inputs.cliDisabled);
  const sessionToolsets = inputs.sessionToolsets;
  const stateDisabled = rules(inputs.state?.disabled);
  const stateEnabled = rules(inputs.state?.enabled);
  const stateExceptions = new Set(inputs.state?.exceptions ?? []);
  const memo = new LRUCache<string, Visibility>({ max: VISIBILITY_MEMO_SIZE });

  const evaluate = (toolbox: string, server: string, tool: string, canonical: string): Visibility => {
    const entry = servers.get(`${toolbox}/${server}`);
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
    const projectRule = find(project, canonical);
    if (projectRule) {
      return {
        enabled: false,
        source: 'project',
        rule: projectRule.pattern,
        reason: `disabled by "${projectRule.pattern}" in disabledTools of the project file ${inputs.config.project?.source ?? ''}`.trimEnd(),
      };
    }
    const cliRule = find(cli, canonical);
    if (cliRule) {
      return { enabled: false, source: 'cli', rule: cliRule.pattern, reason: `disabled by --disabled-tools "${cliRule.pattern}"` };
    }
    if (sessionToolsets && !sessionToolsets.some((t) => t.includes(canonical))) {
      const names = sessionToolsets.map((t) => t.name).join(', ');
      return { enabled: false, source: 'toolset', rule: names, reason: `not in the toolset(s) this session is limited to (--toolset ${names})` };
    }
    // An exception lifts the globs of the disabled list for exactly that tool; its exact name there still applies.
    const stateRule = stateExceptions.has(canonical) ? stateDisabled.find((r) => r.pattern === canonical) : find(stateDisabled, canonical);
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
    return { enabled: true };
  };

  return {
    check(toolbox, server, tool) {
      const canonical = formatToolName(toolbox, server, tool);
      let result = memo.get(canonical);
      if (!result) {
        result = evaluate(toolbox, server, tool, canonical);
        memo.set(canonical, result);
      }
      return result;
    },
  };
}
