import { readFile } from 'node:fs/promises';
import { missingCommandProblems } from '../clients/command-check.js';
import { parseConfig } from '../config/load.js';
import { jsonFileText, parseJsonDocument } from '../config/parse-json.js';
import { isRecord } from '../config/text.js';
import { findProblems } from '../config/validate.js';
import { WorkbenchError, isWorkbenchError } from '../errors.js';

/**
 * `validate` names every problem in one run (README "CLI" → `validate`): when the config's structure is invalid, the
 * servers whose own entries are sound are still checked for a command or `cwd` this machine does not have, and those
 * problems are listed with the structural ones, so a user fixes the file in one pass, not in waves. Empty when
 * there is nothing to add (or the file cannot be read again as it was).
 */
export async function commandProblemsDespite(path: string, error: WorkbenchError, env: Record<string, string | undefined>): Promise<string[]> {
  if (error.code !== 'CONFIG_INVALID') return [];
  let raw: unknown;
  try {
    raw = parseJsonDocument(jsonFileText(await readFile(path), path), path).value;
  } catch {
    return [];
  }
  const sound = soundServers(raw);
  if (sound === undefined) return [];
  let config;
  try {
    // Without the secret store: a server that uses one carries that as its problem and is not looked at here.
    config = parseConfig(sound, path, env);
  } catch {
    return [];
  }
  return [...missingCommandProblems(config, env).values()].map((p) => `${p.path}: ${p.message}; to fix: ${p.fix}`);
}

/**
 * The document reduced to the server entries that have no problem of their own (and whose toolbox is sound enough to
 * hold them), with nothing else: what can be checked further while the rest of the file is being fixed.
 */
function soundServers(raw: unknown): Record<string, unknown> | undefined {
  if (!isRecord(raw) || !isRecord(raw.toolboxes)) return undefined;
  // What a problem's path falls on: a whole toolbox (its name, its mcpServers object) or one server entry.
  const troubled = new Set<string>();
  for (const path of findProblems(raw).map((p) => p.path.map(String))) {
    if (path[0] !== 'toolboxes' || path[1] === undefined) continue;
    if (path.length === 2 || (path.length === 3 && path[2] === 'mcpServers')) troubled.add(path[1]);
    else if (path[2] === 'mcpServers') troubled.add(`${path[1]}/${path[3]}`);
  }
  const toolboxes: Record<string, unknown> = {};
  for (const [name, toolbox] of Object.entries(raw.toolboxes)) {
    if (!isRecord(toolbox) || !isRecord(toolbox.mcpServers) || troubled.has(name)) continue;
    const servers = Object.fromEntries(Object.entries(toolbox.mcpServers).filter(([server, entry]) => isRecord(entry) && !troubled.has(`${name}/${server}`)));
    if (Object.keys(servers).length > 0) toolboxes[name] = { mcpServers: servers };
  }
  return Object.keys(toolboxes).length === 0 ? undefined : { toolboxes };
}

/** The error with more problems listed after its own (the same code, message and variables). */
export function withMoreDetails(error: unknown, more: readonly string[]): unknown {
  if (!isWorkbenchError(error) || more.length === 0) return error;
  return new WorkbenchError(error.code, error.message, {
    details: [...error.details, ...more],
    variables: error.variables,
    ...(error.hint !== undefined && { hint: error.hint }),
    ...(error.local !== undefined && { local: error.local }),
    cause: error,
  });
}
