import { basename, dirname, sep } from 'node:path';
import { isRecord } from '../config/text.js';
import type { ClientKind, ImportOptions, ImportedVariable } from './import-types.js';
import { uniqueName } from './server-names.js';

/** Names of env variables and headers that usually hold credentials. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|_PAT$)/i;
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$/i;

/**
 * The env entries and headers of a converted entry that hold a credential written as a literal (no `${`): what an
 * import copies into the config unless it moves them into the secret store (`migrate --secrets store`).
 */
export function literalSecrets(entry: Record<string, unknown>): { key: 'env' | 'headers'; name: string; value: string }[] {
  const literal = (value: unknown): value is string => typeof value === 'string' && value !== '' && !value.includes('${');
  const found: { key: 'env' | 'headers'; name: string; value: string }[] = [];
  for (const [key, test] of [['env', SECRET_NAME], ['headers', SECRET_HEADER]] as const) {
    const map = isRecord(entry[key]) ? entry[key] : {};
    for (const [name, value] of Object.entries(map)) if (test.test(name) && literal(value)) found.push({ key, name, value });
  }
  return found;
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

  convert(name: string, entry: unknown): Record<string, unknown> | undefined {
    const skip = (why: string): undefined => {
      this.notes.push(`server "${name}" was skipped: ${why}`);
      return undefined;
    };
    if (!isRecord(entry)) return skip('its entry is not an object');
    // Cline, Roo Code, Windsurf and others mark switched-off servers this way; importing one would switch it on.
    if (entry.disabled === true) return skip('it is marked "disabled": true');
    const declared = entry.type ?? entry.transport;
    let type: string;
    if (declared === undefined) {
      if (typeof entry.command === 'string') type = 'stdio';
      else if (typeof entry.url === 'string') {
        type = 'http';
        this.notes.push(`server "${name}" has a "url" but no "type"; it is imported as "type": "http" (Streamable HTTP) — use "sse" if it is a legacy SSE server`);
      } else return skip('it has neither "command" nor "url"');
    } else if (declared === 'stdio' || declared === 'http' || declared === 'sse') {
      type = declared;
    } else if (declared === 'streamable-http' || declared === 'streamableHttp') {
      type = 'http';
    } else {
      return skip(`its type ${JSON.stringify(declared)} is not one the workbench supports ("stdio", "http", "sse")`);
    }

    const out: Record<string, unknown> = {};
    const where = `server "${name}"`;
    if (declared !== undefined) out.type = type;
    const dropped: string[] = [];
    if (type === 'stdio') {
      if (typeof entry.command !== 'string' || entry.command.trim() === '') return skip('"command" is missing or empty');
      out.command = this.text(entry.command, `${where} command`);
      if (entry.args !== undefined) {
        if (!Array.isArray(entry.args)) return skip('"args" is not an array');
        out.args = entry.args.map((arg, i) => this.text(scalarText(arg, `${where} args[${i}]`, this.notes), `${where} args[${i}]`));
      }
      if (entry.env !== undefined) {
        const env = this.stringMap(entry.env, `${where} env`);
        if (!env) return skip('"env" is not an object');
        out.env = env;
      }
      if (typeof entry.cwd === 'string' && entry.cwd !== '') out.cwd = this.text(entry.cwd, `${where} cwd`);
    } else {
      if (typeof entry.url !== 'string' || entry.url.trim() === '') return skip('"url" is missing or empty');
      out.url = this.text(entry.url, `${where} url`);
      if (entry.headers !== undefined) {
        const headers = this.stringMap(entry.headers, `${where} headers`);
        if (!headers) return skip('"headers" is not an object');
        out.headers = headers;
      }
    }
    // Moved into the secret store after naming instead (see migrate/store-secrets), so no advice to do it by hand.
    if (this.options.secrets !== 'store') this.noteLiteralSecrets(where, out);
    const own = type === 'stdio' ? STDIO_KEYS : REMOTE_KEYS;
    for (const [key, value] of Object.entries(entry)) {
      if (own.has(key) || key === 'type' || key === 'transport' || key === 'disabled') continue;
      if (/^[$_]/.test(key)) {
        out[key] = value; // a comment in both formats
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
    return out;
  }

  /** Env values and headers that look like secrets written into the file: the import copies them, so say so. */
  private noteLiteralSecrets(where: string, entry: Record<string, unknown>): void {
    for (const { key, name } of literalSecrets(entry)) {
      this.notes.push(
        key === 'env'
          ? `${where}: env ${name} looks like a secret and was copied as written; consider "\${${name}}" in the config and setting ${name} where the workbench runs, or import with --secrets store`
          : `${where}: header ${name} looks like a credential and was copied as written; consider a \${VAR} reference in its place, or import with --secrets store`,
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
      out[key] = this.text(scalarText(item, `${where}.${key}`, this.notes), `${where}.${key}`);
    }
    return out;
  }

  /** Rewrites one string that the workbench expands (command, args, env, cwd, url, headers). */
  private text(value: string, where: string): string {
    switch (this.client) {
      case 'claude-code':
        return value; // the same ${VAR} / ${VAR:-default} syntax as the workbench
      case 'claude-desktop':
        if (/\$\{[A-Za-z_][A-Za-z0-9_]*(\}|:-)/.test(value)) {
          this.notes.push(`${where} contains "\${…}": Claude Desktop passed it literally, but the workbench expands it as an environment variable`);
        }
        return value;
      case 'vscode':
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

  /** The project folder of a `.vscode/mcp.json` (its parent's parent); undefined for a profile's mcp.json. */
  private workspaceFolder(): string | undefined {
    const dir = dirname(this.options.source);
    return basename(dir) === '.vscode' ? dirname(dir) : undefined;
  }
}

/** Numbers and booleans become their text (JSON configs of clients sometimes hold `"PORT": 8080`), with a note. */
function scalarText(value: unknown, where: string, notes: string[]): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') {
    notes.push(`${where} was ${JSON.stringify(value)}; it is written as the string "${String(value)}"`);
    return String(value);
  }
  notes.push(`${where} was ${JSON.stringify(value)}; it is written as JSON text`);
  return JSON.stringify(value);
}
