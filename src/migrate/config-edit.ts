import { expandString } from '../config/expand-env.js';
import { isRecord } from '../config/text.js';
import type { WorkbenchConfig } from '../config/types.js';

/** One change made to the document, at a formatted JSON path. */
export interface ConfigChange {
  path: string;
  message: string;
}

export interface ConfigVariables {
  /** `${VAR}` references without a default, in order of first use. */
  required: string[];
  /** Variables only used as `${VAR:-default}`. */
  optional: string[];
  /** What a variable is for, when the import knows (e.g. which VS Code input it replaces). */
  about: Record<string, string>;
}

export interface ConfigEdit {
  /** The file's text before (empty for a new file) and after. */
  before: string;
  after: string;
  changes: ConfigChange[];
  /** What the user should know or do (what dynamic mode's removal means, variables to set, dropped keys, …). */
  notes: string[];
  variables: ConfigVariables;
  /** The result as the workbench will load it (with placeholder values for unset variables). */
  config: WorkbenchConfig;
}

/**
 * The variables a config document uses in the places the workbench expands (`command`, `args`, `env` values,
 * `cwd`, `url`, `headers` values of every server).
 */
export function configVariables(document: unknown): ConfigVariables {
  const required: string[] = [];
  const optional: string[] = [];
  for (const { value } of expandableStrings(document)) {
    for (const name of expandString(value, {}).missing) if (!required.includes(name)) required.push(name);
    for (const match of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):-/g)) if (!optional.includes(match[1]!)) optional.push(match[1]!);
  }
  return { required, optional: optional.filter((name) => !required.includes(name)), about: {} };
}

/** Every string the workbench expands, with the key it sits under (`command`, `args`, `env`, `cwd`, `url`, `headers`). */
export function* expandableStrings(document: unknown): Generator<{ key: string; value: string }> {
  const toolboxes = isRecord(document) ? document.toolboxes : undefined;
  if (!isRecord(toolboxes)) return;
  for (const toolbox of Object.values(toolboxes)) {
    const servers = isRecord(toolbox) ? toolbox.mcpServers : undefined;
    if (!isRecord(servers)) continue;
    for (const server of Object.values(servers)) {
      if (!isRecord(server)) continue;
      for (const [key, value] of Object.entries(server)) {
        if ((key === 'command' || key === 'cwd' || key === 'url') && typeof value === 'string') yield { key, value };
        else if (key === 'args' && Array.isArray(value)) {
          for (const arg of value) if (typeof arg === 'string') yield { key, value: arg };
        } else if ((key === 'env' || key === 'headers') && isRecord(value)) {
          for (const item of Object.values(value)) if (typeof item === 'string') yield { key, value: item };
        }
      }
    }
  }
}
