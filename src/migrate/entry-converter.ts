import { basename, dirname, resolve, sep } from 'node:path';
import { isRecord } from '../config/text.js';
import { serverKeys } from './plan.js';
import type { ClientKind, ImportOptions, ImportedVariable } from './import-types.js';
import { uniqueName } from './server-names.js';
import { literalSecrets, withReference } from './literal-secrets.js';
import { isSecretHeader } from '../shared/redact.js';

/** Where a server entry runs the workbench itself (the reason to skip it), or undefined. */
export function runsWorkbench(entry: Record<string, unknown>, self: readonly string[]): string | undefined {
  const words = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter((w): w is string => typeof w === 'string');
  for (const word of words) {
    if (/mcp-workbench/i.test(word)) return word;
    if (self.some((path) => resolve(word) === path)) return word;
  }
  return undefined;
}

const STDIO_KEYS = new Set(['command', 'args', 'env', 'cwd']);
const REMOTE_KEYS = new Set(['url', 'headers']);

/** Keys with a specific explanation when they are dropped. */
const DROPPED_KEY_REASONS: Record<string, string> = {
  envFile: 'the workbench does not read env files: set those variables in its environment, or list them in "env" as ${VAR}',
  dev: 'VS Code development mode (watch/debug) has no workbench equivalent',
  headersHelper: 'the workbench does not run header helpers: put the header in "headers", using ${VAR} for secrets',
  oauth: 'the workbench does not run OAuth flows: pass a token in "headers" (e.g. "Authorization": "Bearer ${TOKEN}")',
};

export class EntryConverter {
  private readonly inputs: Map<string, Record<string, unknown>>;
  /** VS Code input id → the variable it became. */
  private readonly inputNames = new Map<string, string>();
  /** Variable → the literal credential it replaces (kept in memory only, to keep different values apart). */
  private readonly secretValues = new Map<string, string>();

  constructor(
    private readonly client: ClientKind,
    private readonly options: ImportOptions,
    raw: unknown,
    private readonly notes: string[],
    private readonly variables: Map<string, ImportedVariable>,
  ) {
    const inputs = isRecord(raw) && Array.isArray(raw.inputs) ? raw.inputs : [];
    this.inputs = new Map(inputs.filter(isRecord).filter((i) => typeof i.id === 'string').map((i) => [i.id as string, i]));
  }

  convert(name: string, raw: unknown): Record<string, unknown> | undefined {
    const skip = (why: string): undefined => {
      this.notes.push(`server "${name}" was skipped: ${why}`);
      return undefined;
    };
    const entry = this.acceptable(raw);
    if (typeof entry === 'string') return skip(entry);
    const type = this.typeOf(name, entry);
    if (type.skip !== undefined) return skip(type.skip);
    const out: Record<string, unknown> = {};
    const where = `server "${name}"`;
    // Written out when the source left it implicit for a URL, so the config says what the guess was.
    if (type.declared !== undefined || type.type !== 'stdio') out.type = type.type;
    const problem = type.type === 'stdio' ? this.stdioFields(entry, where, out) : this.remoteFields(entry, where, out);
    if (problem !== undefined) return skip(problem);
    // Moved into the secret store after naming instead (see migrate/store-secrets); else into ${VAR} references.
    if (this.options.secrets !== 'store') this.moveLiteralSecrets(name, where, out);
    this.carryOtherKeys(entry, type.type, where, out);
    return out;
  }

  /** The entry as an object to import, or why it is skipped (not an object, switched off, the workbench itself). */
  private acceptable(entry: unknown): Record<string, unknown> | string {
    if (!isRecord(entry)) return 'its entry is not an object';
    // Cline, Roo Code, Windsurf and others mark switched-off servers this way; importing one would switch it on.
    if (entry.disabled === true) return 'it is marked "disabled": true';
    // Windsurf calls a remote server's URL "serverUrl".
    if (entry.url === undefined && typeof entry.serverUrl === 'string') {
      const { serverUrl, ...rest } = entry;
      entry = { ...rest, url: serverUrl };
    }
    const record = entry as Record<string, unknown>;
    const itself = runsWorkbench(record, this.options.self ?? []);
    if (itself !== undefined) return `it runs the workbench itself (${JSON.stringify(itself)}); the workbench must not start itself`;
    return record;
  }

  /** The workbench type of an entry (its own `type`/`transport`, else guessed from command or url, with a note). */
  private typeOf(name: string, entry: Record<string, unknown>): { type: string; declared: unknown; skip?: undefined } | { skip: string } {
    const declared = entry.type ?? entry.transport;
    if (declared === undefined) {
      if (typeof entry.command === 'string') return { type: 'stdio', declared };
      if (typeof entry.url !== 'string') return { skip: 'it has neither "command" nor "url"' };
      const type = ssePath(entry.url) ? 'sse' : 'http';
      this.notes.push(
        type === 'sse'
          ? `server "${name}" has a "url" but no "type"; its path ends in /sse, so it is imported as "type": "sse" (legacy HTTP+SSE)`
          : `server "${name}" has a "url" but no "type"; it is imported as "type": "http" (Streamable HTTP) — use "sse" if it is a legacy SSE server`,
      );
      return { type, declared };
    }
    if (declared === 'stdio' || declared === 'http' || declared === 'sse') return { type: declared, declared };
    if (declared === 'streamable-http' || declared === 'streamableHttp') return { type: 'http', declared };
    return { skip: `its type ${JSON.stringify(declared)} is not one the workbench supports ("stdio", "http", "sse")` };
  }

  /** command, args, env and cwd of a stdio entry into `out`; or why the entry is skipped. */
  private stdioFields(entry: Record<string, unknown>, where: string, out: Record<string, unknown>): string | undefined {
    if (typeof entry.command !== 'string' || entry.command.trim() === '') return '"command" is missing or empty';
    out.command = this.text(entry.command, `${where} command`);
    if (entry.args !== undefined) {
      if (!Array.isArray(entry.args)) return '"args" is not an array';
      out.args = entry.args.map((arg, i) => this.text(scalarText(arg, `${where} args[${i}]`, this.notes), `${where} args[${i}]`));
    }
    if (entry.env !== undefined) {
      const env = this.stringMap(entry.env, `${where} env`);
      if (!env) return '"env" is not an object';
      out.env = env;
    }
    if (typeof entry.cwd === 'string' && entry.cwd !== '') out.cwd = this.text(entry.cwd, `${where} cwd`);
    return undefined;
  }

  /** url and headers of a remote entry into `out`; or why the entry is skipped. */
  private remoteFields(entry: Record<string, unknown>, where: string, out: Record<string, unknown>): string | undefined {
    if (typeof entry.url !== 'string' || entry.url.trim() === '') return '"url" is missing or empty';
    out.url = this.text(entry.url, `${where} url`);
    if (entry.headers !== undefined) {
      const headers = this.stringMap(entry.headers, `${where} headers`);
      if (!headers) return '"headers" is not an object';
      out.headers = headers;
    }
    return undefined;
  }

  /** Every other key: kept when a workbench entry has it (or it is a comment), else dropped with a note. */
  private carryOtherKeys(entry: Record<string, unknown>, type: string, where: string, out: Record<string, unknown>): void {
    const own = type === 'stdio' ? STDIO_KEYS : REMOTE_KEYS;
    // A workbench source keeps every key a workbench server entry has (timeouts, shared, …).
    const kept = this.client === 'workbench' ? new Set(serverKeys()) : new Set<string>();
    const dropped: string[] = [];
    for (const [key, value] of Object.entries(entry)) {
      if (own.has(key) || key === 'type' || key === 'transport' || key === 'disabled') continue;
      if (kept.has(key) || /^[$_]/.test(key)) {
        out[key] = value; // a workbench key, or a comment in both formats
        continue;
      }
      if (key === 'cwd' && value === '') continue;
      const reason = DROPPED_KEY_REASONS[key];
      if (reason) this.notes.push(`${where}: "${key}" was dropped: ${reason}`);
      else dropped.push(key);
    }
    if (dropped.length > 0) {
      const list = dropped.map((k) => `"${k}"`).join(', ');
      this.notes.push(`${where}: ${list} ${dropped.length === 1 ? 'is' : 'are'} not part of a ${type} server entry the workbench knows, so ${dropped.length === 1 ? 'it was' : 'they were'} dropped`);
    }
  }

  /**
   * Credentials written into the file — env values and headers whose names name a secret, a URL's user info and
   * secret-looking query parameters, arguments after or joined to a flag that names a secret, by the one redaction rule (README "Secrets") — are never copied: each becomes a
   * `${VAR}` reference (the env entry's own name, `<SERVER>_TOKEN` for an Authorization header, `<SERVER>_<NAME>` for
   * another header, `<SERVER>_URL_USER`/`_URL_PASSWORD`/`_<PARAMETER>` in a URL, `<SERVER>_<FLAG>` for an argument
   * (`--api-key=…`, or the one after `--api-key`); a header's `Bearer `/`Basic ` scheme
   * is kept), listed with the variables to set. The value itself is dropped and never shown.
   */
  private moveLiteralSecrets(server: string, where: string, entry: Record<string, unknown>): void {
    for (const secret of literalSecrets(entry)) {
      const { key, name, value, what } = secret;
      const suffix = key === 'env' ? name : key === 'url' ? (name === 'user' || name === 'password' ? `url_${name}` : name) : /^(proxy-)?authorization$/i.test(name) ? 'token' : name;
      const base = (key === 'env' ? suffix : `${server}_${suffix}`)
        .replace(/[^A-Za-z0-9_]+/g, '_')
        .replace(/^([0-9])/, '_$1')
        .toUpperCase();
      let variable = base;
      // The same variable for two different values would give one server the other's credential.
      for (let n = 2; this.secretValues.has(variable) && this.secretValues.get(variable) !== value; n++) variable = `${base}_${n}`;
      this.secretValues.set(variable, value);
      Object.assign(entry, withReference(entry, secret, `\${${variable}}`, true));
      const how = key === 'url' ? ' (as it was written in the URL, percent-encoded)' : '';
      if (!this.variables.has(variable)) this.variables.set(variable, { name: variable, reason: `the credential ${where} had written in ${what}${how}` });
      this.notes.push(
        `${where}: ${what} held a literal credential; it now reads \${${variable}} (set ${variable} where the workbench runs, or import with --secrets store); the value is not copied or shown`,
      );
    }
  }

  private stringMap(value: unknown, where: string): Record<string, string> | undefined {
    if (!isRecord(value)) return undefined;
    const out: Record<string, string> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === null || item === undefined) {
        this.notes.push(`${where}.${key} is null; it was dropped`);
        continue;
      }
      out[key] = this.text(scalarText(item, `${where}.${key}`, this.notes, isSecretHeader(key)), `${where}.${key}`);
    }
    return out;
  }

  /** Rewrites one string that the workbench expands (command, args, env, cwd, url, headers). */
  private text(value: string, where: string): string {
    switch (this.client) {
      case 'claude-code':
      case 'workbench':
        return value; // the same ${VAR} / ${VAR:-default} syntax as the workbench
      case 'claude-desktop':
        if (/\$\{[A-Za-z_][A-Za-z0-9_]*(\}|:-)/.test(value)) {
          this.notes.push(`${where} contains "\${…}": Claude Desktop passed it literally, but the workbench expands it as an environment variable`);
        }
        return value;
      case 'vscode':
      case 'cursor':
      case 'windsurf':
        // Cursor and Windsurf interpolate VS Code's way: ${env:NAME}, ${userHome}, ${workspaceFolder}.
        return value.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => this.vscodeVariable(whole, inner, where));
    }
  }

  private vscodeVariable(whole: string, inner: string, where: string): string {
    const colon = inner.indexOf(':');
    const scope = colon === -1 ? inner : inner.slice(0, colon);
    const argument = colon === -1 ? '' : inner.slice(colon + 1);
    if (scope === 'input' && argument !== '') return this.inputVariable(argument, where);
    if (scope === 'env' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(argument)) return `\${${argument}}`;
    const workspace = this.workspaceFolder();
    switch (inner) {
      case 'workspaceFolder':
        return this.predefined(inner, 'WORKSPACE_FOLDER', workspace, 'the project folder VS Code had open');
      case 'workspaceFolderBasename':
        return this.predefined(inner, 'WORKSPACE_FOLDER_BASENAME', workspace === undefined ? undefined : basename(workspace), 'the name of the project folder');
      case 'userHome':
        return '${HOME}';
      case 'pathSeparator':
      case '/':
        return sep;
      default:
        this.notes.push(`${where}: the VS Code variable ${whole} has no workbench equivalent; replace it by hand`);
        return whole;
    }
  }

  /** `${input:id}` → `${ID}`: VS Code prompted for the value; the workbench reads it from its environment. */
  private inputVariable(id: string, where: string): string {
    let name = this.inputNames.get(id);
    const input = this.inputs.get(id);
    if (name === undefined) {
      const base = id.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase() || 'INPUT';
      name = uniqueName(/^[0-9]/.test(base) ? `INPUT_${base}` : base, new Set(this.variables.keys())).replace(/-/g, '_');
      this.inputNames.set(id, name);
      const description = typeof input?.description === 'string' ? `: ${input.description}` : '';
      const secret = input?.password === true ? ', a password' : '';
      const options = Array.isArray(input?.options) ? `; one of ${input.options.map((o) => (isRecord(o) ? String(o.value ?? o.label) : String(o))).join(', ')}` : '';
      const declared = input ? '' : ' (not declared in "inputs")';
      this.variables.set(name, { name, reason: `replaces VS Code input "${id}"${declared}${secret}${description}${options}` });
      this.notes.push(`${where}: \${input:${id}} (which VS Code prompted for) became \${${name}}, read from the environment`);
    }
    const fallback = input?.default;
    return typeof fallback === 'string' && fallback !== '' && !/[{}$]/.test(fallback) && input?.password !== true ? `\${${name}:-${fallback}}` : `\${${name}}`;
  }

  /** `${workspaceFolder}` and friends → `${NAME:-<the folder>}`, or `${NAME}` when the folder is unknown. */
  private predefined(vscodeName: string, name: string, fallback: string | undefined, what: string): string {
    const usable = fallback !== undefined && !/[{}$]/.test(fallback) ? fallback : undefined;
    const reference = usable !== undefined ? `\${${name}:-${usable}}` : `\${${name}}`;
    if (!this.variables.has(name)) {
      this.variables.set(name, { name, reason: what });
      this.notes.push(
        usable !== undefined
          ? `\${${vscodeName}} became ${reference}; set ${name} to use another folder`
          : `\${${vscodeName}} became ${reference}: the folder is unknown for an mcp.json outside a .vscode folder, so set ${name}`,
      );
    }
    return reference;
  }

  /** The project folder of a `.vscode/mcp.json` or `.cursor/mcp.json` (its parent's parent); else undefined. */
  private workspaceFolder(): string | undefined {
    const dir = dirname(this.options.source);
    return basename(dir) === '.vscode' || basename(dir) === '.cursor' ? dirname(dir) : undefined;
  }
}

/** Whether a URL's path ends in `/sse` (a trailing slash aside): the legacy HTTP+SSE transport's usual endpoint. */
function ssePath(url: string): boolean {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.replace(/[?#].*$/, ''); // a URL made of ${VAR}s
  }
  return /\/sse\/?$/i.test(path);
}

/** Numbers and booleans become their text (JSON configs of clients sometimes hold `"PORT": 8080`), with a note. */
function scalarText(value: unknown, where: string, notes: string[], secret = false): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') {
    notes.push(secret ? `${where} was not a string; it is written as one` : `${where} was ${JSON.stringify(value)}; it is written as the string "${String(value)}"`);
    return String(value);
  }
  notes.push(`${where} was ${JSON.stringify(value)}; it is written as JSON text`);
  return JSON.stringify(value);
}
