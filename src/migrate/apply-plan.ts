import { describeDuplicateKeys, parseJsonDocument, parseJsonText } from '../config/parse-json.js';
import { type JsonPath, expandString } from '../config/expand-env.js';
import { parseConfig } from '../config/load.js';
import { WorkbenchError, isWorkbenchError } from '../errors.js';
import { configProblemsError } from '../config/server-problems.js';
import { isRecord } from '../config/text.js';
import type { WorkbenchConfig } from '../config/types.js';
import { type ConfigEdit, configVariables, expandableStrings } from './config-edit.js';
import { formattingOf, insertMember, removeMember, renameKey } from './json-edit.js';
import type { Op, Plan } from './plan.js';

// ---------------------------------------------------------------------------------------------------------------
// Applying a plan and checking the result.

/**
 * The document of a config file about to be edited (`migrate`, `server add`/`remove`). A key written twice makes
 * "the member called X" ambiguous — JSON keeps the last, the user may have meant the first — so such a file is
 * refused rather than edited: nothing a user wrote may be dropped without being asked.
 *
 * @throws WorkbenchError `CONFIG_PARSE` when it does not parse; `CONFIG_INVALID` naming every key written twice.
 */
export function documentToEdit(text: string, source: string): unknown {
  const { value, duplicateKeys } = parseJsonDocument(text, source);
  if (duplicateKeys.length > 0) throw duplicateKeysError(source, duplicateKeys);
  return value;
}

function duplicateKeysError(source: string, paths: readonly JsonPath[]): WorkbenchError {
  const count = paths.length === 1 ? 'a key that is' : `${paths.length} keys that are`;
  return new WorkbenchError(
    'CONFIG_INVALID',
    `${source} has ${count} written more than once in the same object, so it is not edited (which one you meant is ` +
      'unclear, and JSON would silently drop the others); nothing was written. Remove or merge the duplicates by hand ' +
      `(mcp-workbench validate --config ${source} lists them), then run the command again:`,
    { details: describeDuplicateKeys(paths) },
  );
}

export function finish(text: string, document: unknown, plan: Plan, source: string, fresh?: string, about: Record<string, string> = {}): ConfigEdit {
  const after = fresh ?? applyPlan(text, document, plan, source);
  // Checked as `validate` reads the file, duplicate keys included: a saved result always passes it.
  const parsed = fresh === undefined ? parseJsonDocument(after, source) : { value: document, duplicateKeys: [] };
  const result = parsed.value;
  const config = resultChecked(() => checkConfig(result, source, parsed.duplicateKeys), source);
  const variables = configVariables(result);
  for (const [name, why] of Object.entries(about)) if (variables.required.includes(name) || variables.optional.includes(name)) variables.about[name] = why;
  return { before: text, after, changes: plan.changes, notes: [...new Set(plan.notes)], variables, config };
}

/**
 * Applies the plan to the text, keeping everything else byte for byte. The file is never re-serialised (that would
 * drop its comments and formatting): should the text edit not give exactly the document the plan describes, the
 * edit is refused.
 *
 * @throws WorkbenchError `CONFIG_UNWRITABLE` when the edited text is not the planned document; nothing is written.
 */
function applyPlan(text: string, document: unknown, plan: Plan, source: string): string {
  const ops = plan.ops;
  if (ops.length === 0) return text;
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  let body = bom ? text.slice(1) : text;
  const formatting = formattingOf(body);
  const expected = applyToValue(document, ops);
  for (const op of deepestFirst(ops)) {
    if (op.op === 'rename') body = renameKey(body, op.path, op.to);
    else if (op.op === 'remove') body = removeMember(body, op.path);
    else for (const [key, value] of op.entries) body = insertMember(body, op.path, key, value, formatting);
  }
  // The text edit must give exactly the document the plan describes (keys in the same order too).
  if (sameJson(body, expected)) return bom + body;
  throw new WorkbenchError(
    'CONFIG_UNWRITABLE',
    `Could not edit ${source} in place: the edited text did not come out as the planned change, and the file is ` +
      'never rewritten as a whole (its comments and formatting would be lost), so nothing was written. Make these ' +
      'changes by hand, then check the file with `mcp-workbench validate` (and please report this as a bug, with the ' +
      'file):',
    { details: plan.changes.map((change) => `${change.path}: ${change.message}`) },
  );
}

function sameJson(text: string, expected: unknown): boolean {
  try {
    // The config is JSONC: the edited text keeps the user's comments and trailing commas.
    return JSON.stringify(parseJsonText(text).value) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/** Deepest first, so no path runs through a key renamed before it; an insert into an object precedes its rename. */
function deepestFirst(ops: readonly Op[]): Op[] {
  const depth = (op: Op): number => op.path.length + (op.op === 'insert' ? 1 : 0);
  return [...ops].sort((a, b) => depth(b) - depth(a));
}

/** The plan applied to a copy of the document, in the order the text is edited. */
function applyToValue(document: unknown, ops: readonly Op[]): unknown {
  const copy = structuredClone(document);
  for (const op of deepestFirst(ops)) {
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
 * Runs the check of an edit's result: its problems are told as the result's ("would not pass validate"), never as if
 * the command itself were broken, with what to do next.
 */
function resultChecked<T>(check: () => T, source: string): T {
  try {
    return check();
  } catch (error) {
    if (!isWorkbenchError(error, 'CONFIG_INVALID') && !isWorkbenchError(error, 'ENV_MISSING')) throw error;
    const lead = `${source} would not pass \`mcp-workbench validate\` after this change, so nothing was written. Fix these first (in the file, or in what the command was given), then run it again:`;
    throw new WorkbenchError(error.code, error.details.length > 0 ? lead : `${lead} ${error.message}`, { details: error.details, variables: error.variables, cause: error });
  }
}

/**
 * Validates exactly as the loader does, with every variable and secret the document needs set to a placeholder: a
 * variable missing from this shell is reported to the user, not treated as a broken config.
 */
function checkConfig(document: unknown, source: string, duplicateKeys: readonly JsonPath[]): WorkbenchConfig {
  const env: Record<string, string> = {};
  for (const { value, key } of expandableStrings(document)) {
    for (const name of expandString(value, env).missing) {
      // A URL made from a variable must still parse as one.
      env[name] = key === 'url' && value.startsWith(`\${${name}`) ? 'http://placeholder.invalid' : 'placeholder';
    }
  }
  // Likewise every ${secret:NAME}: whether it is stored is for `validate` to say, not a flaw of the document.
  const config = parseConfig(document, source, env, { duplicateKeys, secrets: { where: 'the secret store', get: () => 'placeholder' } });
  // A server that could not start (a malformed URL) makes the result as invalid as a schema violation would.
  const broken = configProblemsError(config);
  if (broken) throw broken;
  return config;
}
