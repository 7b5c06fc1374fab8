import { WorkbenchError } from '../errors.js';
import { namesSecret, type Secret } from '../shared/redact.js';
import { quoteClientText } from '../shared/client-text.js';
import type { SecretSource } from './secret-source.js';
import { isRecord } from './text.js';

/** An environment as passed in by the caller; `undefined` and absent both mean "unset". */
export type EnvLike = Readonly<Record<string, string | undefined>>;

/** A path into the config document: object keys as strings, array indices as numbers. */
export type JsonPath = readonly (string | number)[];

/**
 * Formats a path the way every config message shows it: `toolboxes.dev.mcpServers.fs.args[2]`. Keys made only of
 * letters, digits, `_`, `-` and `$` are joined with dots; any other key is quoted (`headers["Content Type"]`) so the
 * path stays unambiguous. The empty path is `(root)`.
 */
export function formatJsonPath(path: JsonPath): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z0-9_$-]+$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    // A key of any other form is the file's text: escaped and cut (a project file's comes with a cloned repository).
    else out += `[${quoteClientText(segment, 80)}]`;
  }
  return out;
}

/** One use of an unset variable that has no default. */
export interface MissingVariable {
  name: string;
  /** Formatted with {@link formatJsonPath}. */
  path: string;
  /** The toolbox and server whose entry uses it: that server cannot start, the others can. */
  toolbox: string;
  server: string;
}

export interface ExpandResult {
  /** A copy of the input with the expandable strings expanded; the input is never modified. */
  config: unknown;
  /** Paths (never values) of strings holding a `${` that is not a supported form and was kept literally. */
  warnings: string[];
  /**
   * Every value substituted from a variable whose name names a secret (`${API_TOKEN}`), labelled `${NAME}`: what
   * output must never show, wherever it was used (see shared/redact). Other values are shown as expanded.
   */
  secrets: Secret[];
  /** Every use of an unset variable without a default, in document order; its server cannot start. */
  missing: MissingVariable[];
  /** Every use of a `${secret:NAME}` that the secret source does not hold (or could not read); `name` is the secret's. */
  missingSecrets: MissingVariable[];
  /** Every use of a stored secret that resolved, with where it is used (never its value). */
  secretUses: SecretUse[];
}

/** One use of `${secret:NAME}` that resolved: the catalog cache keys the env entries and headers that hold one. */
export interface SecretUse {
  name: string;
  toolbox: string;
  server: string;
  /** `env` or `headers` with the entry's name, when the secret is used in one; absent elsewhere (args, url, …). */
  entry?: { key: 'env' | 'headers'; name: string };
}

/**
 * Expands `${VAR}`, `${VAR:-default}` and `${secret:NAME}` in the places of every server where the contract allows it: `command`,
 * each `args` item, `env` values, `cwd`, `url`, `headers` values and the strings of `auth`. Nothing else in the config
 * is touched.
 *
 * Semantics (a deliberate subset of the shell): `${VAR}` uses the value even when it is empty and is an error when
 * VAR is unset; `${VAR:-default}` uses the default when VAR is unset or empty, and the default may itself contain
 * `${...}` forms, which are only evaluated when the default is used. Every other `$` construct (`$VAR`, `$(cmd)`,
 * `` `cmd` ``, `$1`, `${VAR-x}`, `${VAR:+x}`, …) stays literal text; nothing is ever executed. Substituted values are
 * never re-expanded, so a secret containing `$` arrives intact.
 *
 * `${secret:NAME}` takes the value stored under NAME in `secrets` (README "Secrets"), as a plain lookup: nothing is
 * run. It may stand anywhere a `${VAR}` may, including inside a default (`${GITHUB_TOKEN:-${secret:github}}`, looked
 * up only when the default is used), but has no default of its own. Every resolved value is a secret whatever it is
 * called (labelled `secret NAME`); one that is not stored, or any when `secrets` is absent or unreadable, is reported
 * in `missingSecrets` like an unset variable in `missing`.
 *
 * An unset variable without a default is not an error here: it is reported in `missing` with its path and server
 * (and contributes an empty string), so the caller can fail only the servers that use one (README "Configuration").
 * {@link missingVariablesError} turns such a list into one error naming them all.
 *
 * Walks the config defensively (anything not shaped like a config is copied as is), so it can run before or after
 * schema validation. `env` is only read. Never throws.
 */
export function expandConfigEnv(raw: unknown, env: EnvLike, secretSource?: SecretSource): ExpandResult {
  const config = structuredClone(raw);
  const missing: MissingVariable[] = [];
  const missingSecrets: MissingVariable[] = [];
  const secretUses: SecretUse[] = [];
  const warnings: string[] = [];
  const secrets: Secret[] = [];

  const expandAt = (text: string, path: JsonPath): string => {
    const result = expandString(text, env, secretSource);
    for (const { name, value } of result.substituted) if (namesSecret(name)) secrets.push({ value, label: `\${${name}}` });
    const [, toolbox, , server, key, entry] = path as string[];
    for (const { name, value } of result.stored) {
      secrets.push({ value, label: `secret ${name}` });
      const inEntry = (key === 'env' || key === 'headers') && typeof entry === 'string';
      secretUses.push({ name, toolbox: toolbox!, server: server!, ...(inEntry && { entry: { key, name: entry } }) });
    }
    for (const name of result.missing) missing.push({ name, path: formatJsonPath(path), toolbox: toolbox!, server: server! });
    for (const name of result.missingSecrets) missingSecrets.push({ name, path: formatJsonPath(path), toolbox: toolbox!, server: server! });
    if (result.keptLiteral) {
      warnings.push(
        `${formatJsonPath(path)}: contains "\${" that is not \${VAR}, \${VAR:-default}, \${secret:NAME}, \${user:id} or \${user:dir}; it was kept as literal text`,
      );
    }
    return result.value;
  };

  const toolboxes = isRecord(config) ? config.toolboxes : undefined;
  if (isRecord(toolboxes)) {
    for (const [toolboxName, toolbox] of Object.entries(toolboxes)) {
      const servers = isRecord(toolbox) ? toolbox.mcpServers : undefined;
      if (!isRecord(servers)) continue;
      for (const [serverName, server] of Object.entries(servers)) {
        if (!isRecord(server)) continue;
        const at = ['toolboxes', toolboxName, 'mcpServers', serverName];
        // In the server's own key order, so problems are listed as they appear in the file.
        for (const [key, value] of Object.entries(server)) {
          if ((key === 'command' || key === 'cwd' || key === 'url') && typeof value === 'string') {
            server[key] = expandAt(value, [...at, key]);
          } else if (key === 'args' && Array.isArray(value)) {
            value.forEach((arg: unknown, index) => {
              if (typeof arg === 'string') value[index] = expandAt(arg, [...at, key, index]);
            });
          } else if ((key === 'env' || key === 'headers') && isRecord(value)) {
            for (const [name, item] of Object.entries(value)) {
              if (typeof item === 'string') value[name] = expandAt(item, [...at, key, name]);
            }
          } else if (key === 'auth' && isRecord(value)) {
            expandNested(value, [...at, key], expandAt);
          }
        }
      }
    }
  }

  return { config, warnings, secrets, missing, missingSecrets, secretUses };
}

/** Expands every string inside `node` (the `auth` object: its strings, `scopes` and `identityProvider`), in place. */
function expandNested(node: Record<string, unknown> | unknown[], path: JsonPath, expandAt: (text: string, path: JsonPath) => string): void {
  const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
  for (const [key, item] of entries) {
    // Comment keys are not settings: left as written.
    if (typeof key === 'string' && /^[$_]/.test(key)) continue;
    if (typeof item === 'string') (node as Record<string | number, unknown>)[key] = expandAt(item, [...path, key]);
    else if (Array.isArray(item) || isRecord(item)) expandNested(item, [...path, key], expandAt);
  }
}

/** The outcome of expanding one string. */
export interface ExpandStringResult {
  value: string;
  /** Unset variables without a default, in order of use (a name may repeat). */
  missing: string[];
  /** True when the text holds a `${` that is not a supported form (it was left as is). */
  keptLiteral: boolean;
  /** Each variable whose value went into `value`, with that value. */
  substituted: { name: string; value: string }[];
  /** Each stored secret (`${secret:NAME}`) whose value went into `value`, with that value. */
  stored: { name: string; value: string }[];
  /** Secrets referenced where their value was needed but not available, in order of use. */
  missingSecrets: string[];
}

/**
 * Expands one string with the rules of {@link expandConfigEnv}. Never throws: unset variables without a default are
 * reported in `missing` and contribute an empty string to `value`, which the caller must then not use.
 */
export function expandString(text: string, env: EnvLike, secretSource?: SecretSource): ExpandStringResult {
  const { pieces, keptLiteral } = tokenize(text);
  const found: Found = { missing: [], substituted: [], stored: [], missingSecrets: [] };
  return { value: evaluate(pieces, env, secretSource, found), keptLiteral, ...found };
}

type Piece = string | Reference;

/** `${name}` (fallback undefined), `${name:-fallback}`, or `${secret:name}` (secret true, never a fallback). */
interface Reference {
  name: string;
  fallback?: Piece[];
  secret?: true;
}

type Found = Pick<ExpandStringResult, 'missing' | 'substituted' | 'stored' | 'missingSecrets'>;

/** `secret:NAME}` right after `${`: the name rule of config/secret-source (a letter, then letters, digits, `_-.`). */
const SECRET_REFERENCE = /^secret:([A-Za-z][A-Za-z0-9_.-]{0,63})\}/;

/**
 * `${user:id}` and `${user:dir}`: kept as written here, and filled in each time a server is started, for the user its
 * process serves (clients/user-places.ts, README "Files of each user").
 */
export const USER_FORMS = ['${user:id}', '${user:dir}'] as const;

function tokenize(text: string): { pieces: Piece[]; keptLiteral: boolean } {
  const pieces: Piece[] = [];
  let keptLiteral = false;
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const userForm = text.startsWith('${user:', i) ? USER_FORMS.find((form) => text.startsWith(form, i)) : undefined;
    if (userForm !== undefined) {
      literal += userForm;
      i += userForm.length;
      continue;
    }
    if (text.startsWith('${', i)) {
      const parsed = parseReference(text, i);
      if (parsed) {
        if (literal !== '') pieces.push(literal);
        literal = '';
        pieces.push(parsed.reference);
        i = parsed.end;
        continue;
      }
      keptLiteral = true;
      literal += '${';
      i += 2;
      continue;
    }
    literal += text[i];
    i += 1;
  }
  if (literal !== '') pieces.push(literal);
  return { pieces, keptLiteral };
}

/**
 * Parses a reference starting at `start` (which points at `${`), or returns undefined when the text there is not a
 * supported form. A default ends at the first `}` that does not close a nested reference; a default holding a bare
 * `{` or `}` is refused rather than guessed at.
 */
function parseReference(text: string, start: number): { reference: Reference; end: number } | undefined {
  const secret = SECRET_REFERENCE.exec(text.slice(start + 2, start + 2 + 72));
  if (secret) return { reference: { name: secret[1]!, secret: true }, end: start + 2 + secret[0].length };
  const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(start + 2));
  if (!match) return undefined;
  const name = match[0];
  let i = start + 2 + name.length;
  if (text[i] === '}') return { reference: { name }, end: i + 1 };
  if (!text.startsWith(':-', i)) return undefined;
  i += 2;
  const fallback: Piece[] = [];
  let literal = '';
  while (i < text.length) {
    const ch = text[i];
    if (ch === '}') {
      if (literal !== '') fallback.push(literal);
      return { reference: { name, fallback }, end: i + 1 };
    }
    if (ch === '{') return undefined;
    if (ch === '$' && text[i + 1] === '{') {
      const inner = parseReference(text, i);
      if (!inner) return undefined;
      if (literal !== '') fallback.push(literal);
      literal = '';
      fallback.push(inner.reference);
      i = inner.end;
      continue;
    }
    literal += ch;
    i += 1;
  }
  return undefined;
}

function evaluate(pieces: readonly Piece[], env: EnvLike, secretSource: SecretSource | undefined, found: Found): string {
  let out = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    if (piece.secret) {
      const value = secretSource && secretSource.problem === undefined ? secretSource.get(piece.name) : undefined;
      if (value === undefined) found.missingSecrets.push(piece.name);
      else {
        found.stored.push({ name: piece.name, value });
        out += value;
      }
      continue;
    }
    const value = lookup(env, piece.name);
    if (piece.fallback === undefined) {
      if (value === undefined) found.missing.push(piece.name);
      else {
        found.substituted.push({ name: piece.name, value });
        out += value;
      }
    } else if (value !== undefined && value !== '') {
      found.substituted.push({ name: piece.name, value });
      out += value;
    } else {
      out += evaluate(piece.fallback, env, secretSource, found);
    }
  }
  return out;
}

/** Own properties only, so names like `constructor` or `__proto__` never resolve to Object.prototype members. */
function lookup(env: EnvLike, name: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(env, name) ? env[name] : undefined;
}

/**
 * One `ENV_MISSING` error naming every unset variable at once (the message, and `variables` as a field) and each use
 * with its path (`details`). Names and paths only, never values.
 */
export function missingVariablesError(missing: readonly Pick<MissingVariable, 'name' | 'path'>[], source: string | undefined): WorkbenchError {
  const names = [...new Set(missing.map((m) => m.name))];
  const where = source === undefined ? 'the config' : source;
  const noun = names.length === 1 ? 'variable is' : 'variables are';
  return new WorkbenchError(
    'ENV_MISSING',
    `${names.length} environment ${noun} used in ${where} but not set: ${names.join(', ')}. ` +
      'Set them in the environment the workbench runs in (for example in the "env" of the mcp-workbench entry of ' +
      'your MCP client), or give a default with ${VAR:-default}.',
    { details: missing.map((m) => `${m.path}: \${${m.name}} is not set and has no default`), variables: names },
  );
}

