import { parseJsonText } from '../config/parse-json.js';
import { expandString } from '../config/expand-env.js';
import { parseConfig, parseConfigJson } from '../config/load.js';
import { configProblemsError } from '../config/server-problems.js';
import { isRecord } from '../config/text.js';
import type { WorkbenchConfig } from '../config/types.js';
import { type ConfigEdit, configVariables, expandableStrings } from './config-edit.js';
import { formattingOf, indentUnit, insertMember, removeMember, renameKey } from './json-edit.js';
import type { Op, Plan } from './plan.js';

// ---------------------------------------------------------------------------------------------------------------
// Applying a plan and checking the result.

export function finish(text: string, document: unknown, plan: Plan, source: string, fresh?: string, about: Record<string, string> = {}): ConfigEdit {
  const after = fresh ?? applyPlan(text, document, plan.ops);
  const result = fresh === undefined ? parseConfigJson(after, source) : document;
  const config = checkConfig(result, source);
  const variables = configVariables(result);
  for (const [name, why] of Object.entries(about)) if (variables.required.includes(name) || variables.optional.includes(name)) variables.about[name] = why;
  return { before: text, after, changes: plan.changes, notes: [...new Set(plan.notes)], variables, config };
}

/**
 * Applies the plan to the text, keeping everything else byte for byte. Falls back to re-serialising the edited
 * document (same key order, the file's indentation) when the text cannot be edited safely (duplicate keys).
 */
function applyPlan(text: string, document: unknown, ops: readonly Op[]): string {
  if (ops.length === 0) return text;
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  let body = bom ? text.slice(1) : text;
  const formatting = formattingOf(body);
  const expected = applyToValue(document, ops);
  // Deepest first, so no path runs through a key renamed before it; an insert into an object precedes its rename.
  const depth = (op: Op): number => op.path.length + (op.op === 'insert' ? 1 : 0);
  for (const op of [...ops].sort((a, b) => depth(b) - depth(a))) {
    if (op.op === 'rename') body = renameKey(body, op.path, op.to);
    else if (op.op === 'remove') body = removeMember(body, op.path);
    else for (const [key, value] of op.entries) body = insertMember(body, op.path, key, value, formatting);
  }
  // The text edit must give exactly the document the plan describes (keys in the same order too).
  if (sameJson(body, expected)) return bom + body;
  const original = bom ? text.slice(1) : text;
  return `${bom}${JSON.stringify(expected, null, indentUnit(formatting))}${original.endsWith('\n') ? '\n' : ''}`;
}

function sameJson(text: string, expected: unknown): boolean {
  try {
    // The config is JSONC: the edited text keeps the user's comments and trailing commas.
    return JSON.stringify(parseJsonText(text).value) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/** The plan applied to a copy of the document: deepest paths first, so renames of parents come after. */
function applyToValue(document: unknown, ops: readonly Op[]): unknown {
  const copy = structuredClone(document);
  const sorted = [...ops].sort((a, b) => b.path.length - a.path.length);
  for (const op of sorted) {
    const parentPath = op.op === 'insert' ? op.path : op.path.slice(0, -1);
    let parent: unknown = copy;
    for (const key of parentPath) parent = isRecord(parent) ? parent[key] : undefined;
    if (!isRecord(parent)) continue;
    if (op.op === 'insert') {
      for (const [key, value] of op.entries) parent[key] = value;
      continue;
    }
    const key = op.path[op.path.length - 1]!;
    const entries = Object.entries(parent);
    for (const k of Object.keys(parent)) delete parent[k];
    for (const [k, v] of entries) {
      if (k !== key) parent[k] = v;
      else if (op.op === 'rename') parent[op.to] = v;
    }
  }
  return copy;
}

/**
 * Validates exactly as the loader does, with every variable and secret the document needs set to a placeholder: a
 * variable missing from this shell is reported to the user, not treated as a broken config.
 */
function checkConfig(document: unknown, source: string): WorkbenchConfig {
  const env: Record<string, string> = {};
  for (const { value, key } of expandableStrings(document)) {
    for (const name of expandString(value, env).missing) {
      // A URL made from a variable must still parse as one.
      env[name] = key === 'url' && value.startsWith(`\${${name}`) ? 'http://placeholder.invalid' : 'placeholder';
    }
  }
  // Likewise every ${secret:NAME}: whether it is stored is for `validate` to say, not a flaw of the document.
  const config = parseConfig(document, source, env, { secrets: { where: 'the secret store', get: () => 'placeholder' } });
  // A server that could not start (a malformed URL) makes the result as invalid as a schema violation would.
  const broken = configProblemsError(config);
  if (broken) throw broken;
  return config;
}
