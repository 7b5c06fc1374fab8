import { WorkbenchError, type ServerProblem } from '../errors.js';
import { isHttpUrl, isRecord } from './text.js';
import { hasAuthorizationHeader, splitUserInfo } from './remote-endpoint.js';
import { type EnvLike, formatJsonPath, missingVariablesError, type MissingVariable } from './expand-env.js';
import type { RawConfig } from './normalise.js';
import { type SecretSource, secretSetCommand } from './secret-source.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from './types.js';

/**
 * Problems that belong to one server's entry — an unset variable, a malformed URL, a command made empty by expansion —
 * fail that server only (README "Configuration"): the entry is loaded with its `problems`, connecting it fails at once
 * with them, and the other servers work. Messages name variables and paths, never values.
 */

/** Problems per server, keyed by {@link serverKey}. */
export type ServerProblems = Map<string, ServerProblem[]>;

export function serverKey(toolbox: string, server: string): string {
  return JSON.stringify([toolbox, server]);
}

/**
 * Finds the problems of each server of an expanded document: every use of an unset variable (`missing`, grouped by
 * path) and of a secret the store does not hold (`missingSecrets`, named with the `secret set` command), then the
 * checks that only make sense on expanded values — `command`/`cwd` not empty, `url` an absolute http(s) URL whose
 * user info (if any) is not sent beside an `Authorization` header of the entry's own. A value
 * that is already wrong because a variable or secret in it is missing is not reported a second time.
 */
export function findServerProblems(
  document: RawConfig,
  missing: readonly MissingVariable[],
  missingSecrets: readonly MissingVariable[] = [],
  secretSource?: SecretSource,
  written?: { raw: unknown; env: EnvLike },
): ServerProblems {
  const found: ServerProblems = new Map();
  const add = (toolbox: string, server: string, problem: ServerProblem): void => {
    const key = serverKey(toolbox, server);
    found.set(key, [...(found.get(key) ?? []), problem]);
  };
  const byPath = new Map<string, MissingVariable[]>();
  for (const use of missing) byPath.set(use.path, [...(byPath.get(use.path) ?? []), use]);
  for (const [path, uses] of byPath) add(uses[0]!.toolbox, uses[0]!.server, missingProblem(path, [...new Set(uses.map((u) => u.name))]));
  const secretsByPath = new Map<string, MissingVariable[]>();
  for (const use of missingSecrets) secretsByPath.set(use.path, [...(secretsByPath.get(use.path) ?? []), use]);
  for (const [path, uses] of secretsByPath) {
    add(uses[0]!.toolbox, uses[0]!.server, missingSecretProblem(path, [...new Set(uses.map((u) => u.name))], secretSource));
    if (!byPath.has(path)) byPath.set(path, []);
  }

  for (const [toolboxName, toolbox] of Object.entries(document.toolboxes)) {
    for (const [serverName, server] of Object.entries(toolbox.mcpServers)) {
      const at = ['toolboxes', toolboxName, 'mcpServers', serverName];
      for (const key of ['command', 'cwd'] as const) {
        const path = formatJsonPath([...at, key]);
        if (server[key] === '' && !byPath.has(path)) {
          add(toolboxName, serverName, {
            kind: 'empty-value',
            path,
            message: 'is empty after expanding environment variables',
            fix: emptyValueFix(writtenValue(written?.raw, [...at, key]), written?.env),
          });
        }
      }
      const urlPath = formatJsonPath([...at, 'url']);
      if (server.url !== undefined && !byPath.has(urlPath) && !isHttpUrl(server.url)) {
        add(toolboxName, serverName, {
          kind: 'invalid-url',
          path: urlPath,
          message: 'must be an absolute http:// or https:// URL (checked after expanding environment variables)',
          fix: 'write the endpoint in full, e.g. "https://mcp.example.com/mcp" (when it is made from variables, check their values)',
        });
      } else if (server.url !== undefined && !byPath.has(urlPath) && splitUserInfo(server.url).basic && hasAuthorizationHeader(server.headers ?? {})) {
        add(toolboxName, serverName, {
          kind: 'credentials-twice',
          path: urlPath,
          message:
            'has user info (user:password@), which is sent as an "Authorization: Basic" header, but the entry\'s "headers" has an Authorization header too, and a request carries only one',
          fix: 'remove the user info from "url" (keep the header), or remove the Authorization header from "headers" (keep the user info)',
        });
      } else if (server.url !== undefined && server.auth !== undefined && !byPath.has(urlPath) && server.url.includes('${user:') && !hasAuthorizationHeader(server.headers ?? {})) {
        add(toolboxName, serverName, { kind: 'oauth-per-user-url', path: urlPath, message: OAUTH_PER_USER_URL.message, fix: OAUTH_PER_USER_URL.fix });
      }
    }
  }
  return found;
}

/**
 * A remote entry whose `url` names `${user:…}` — an endpoint of each user's own — and that would be signed in to with
 * OAuth: the workbench holds one sign-in per server, not per user (README "OAuth sign-ins are the workbench's"), so
 * one token would be sent to every user's endpoint, servers it was not issued for. Said the same at load and when such
 * a server asks for a sign-in by a Bearer challenge.
 */
export const OAUTH_PER_USER_URL = {
  message:
    'names ${user:…}, so each user has an endpoint of their own, but an OAuth sign-in is one per server for the whole workbench: one token would be sent to every user\'s endpoint',
  fix: 'write a "url" without ${user:…}, give the server credentials every user may use in "headers" (and remove "auth"), or run a workbench per user (each with its own MCP_WORKBENCH_OAUTH_DIR)',
};

function writtenValue(raw: unknown, path: readonly string[]): string | undefined {
  let node = raw;
  for (const key of path) node = isRecord(node) ? node[key] : undefined;
  return typeof node === 'string' ? node : undefined;
}

/**
 * What to do about a `command` or `cwd` that expanded to nothing, from the references written in it: a variable set
 * but empty, one unset whose default is empty (`${X:-}`), or both. Without the text as written, the general advice.
 */
function emptyValueFix(value: string | undefined, env: EnvLike | undefined): string {
  const general = 'a variable it is made of is empty (or unset with an empty default): set it to a value, or give a non-empty default: ${VAR:-value}';
  if (value === undefined || env === undefined) return general;
  const causes: { name: string; text: string }[] = [];
  for (const [, name, fallback] of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^{}]*))?\}/g)) {
    const set = env[name!];
    // A non-empty value, or a non-empty default (which also applies to an empty variable), fills it.
    if ((set !== undefined && set !== '') || (fallback !== undefined && fallback !== '')) continue;
    const state = set === undefined ? 'is not set' : 'is set but empty';
    causes.push({ name: name!, text: fallback === undefined ? `${name} ${state}` : `${name} ${state} and its default is empty (\${${name}:-})` });
  }
  if (causes.length === 0) return value.trim() === '' ? 'it is empty as written: write the value in the config' : general;
  return (
    `${causes.map((c) => c.text).join('; ')}: set ${causes.length === 1 ? 'it' : 'them'} to a value in the environment the workbench starts ` +
    `with, or give a non-empty default: \${${causes[0]!.name}:-value}`
  );
}

function missingProblem(path: string, names: readonly string[]): ServerProblem {
  const refs = names.map((n) => `\${${n}}`);
  const list = (items: readonly string[]): string => (items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`);
  return {
    kind: 'env-missing',
    path,
    variables: [...names],
    message: `${list(refs)} ${names.length === 1 ? 'is' : 'are'} not set and ${names.length === 1 ? 'has' : 'have'} no default`,
    fix:
      `set ${list(names)} in the environment the workbench starts with (e.g. the "env" of its entry in your MCP client's ` +
      `config) and restart it, or give a default in the config: \${${names[0]}:-value}`,
  };
}

function missingSecretProblem(path: string, names: readonly string[], source: SecretSource | undefined): ServerProblem {
  const refs = names.map((n) => `\${secret:${n}}`).join(', ');
  const commands = names.map((n) => `\`${secretSetCommand(n)}\``).join(', then ');
  const message =
    source === undefined
      ? `${refs} cannot be looked up: no secret store was given`
      : source.problem !== undefined
        ? `${refs} cannot be looked up: ${source.where} cannot be read (${source.problem})`
        : `${refs} ${names.length === 1 ? 'is' : 'are'} not in ${source.where}`;
  const fix =
    source?.problem !== undefined
      ? `repair or remove ${source.where}, then store ${names.length === 1 ? 'it' : 'them'} with ${commands}`
      : `store ${names.length === 1 ? 'it' : 'them'} with ${commands} (the value is read from stdin or a prompt), then restart the workbench or save the config to reload it`;
  return { kind: 'secret-missing', path, secrets: [...names], message, fix };
}

/** The servers of `toolbox`, each with its `problems` when it has any. */
export function withProblems(toolbox: ToolboxConfig, problems: ServerProblems): ToolboxConfig {
  if (problems.size === 0) return toolbox;
  const servers = toolbox.servers.map((server): ServerConfig => {
    const found = problems.get(serverKey(toolbox.name, server.name));
    return found ? { ...server, problems: found } : server;
  });
  return { ...toolbox, servers };
}

/** Every server of the config that cannot start, with its problems. */
export function brokenServers(config: Pick<WorkbenchConfig, 'toolboxes'>): { toolbox: string; server: string; problems: ServerProblem[] }[] {
  return config.toolboxes.flatMap((toolbox) =>
    toolbox.servers.flatMap((server) => (server.problems ? [{ toolbox: toolbox.name, server: server.name, problems: server.problems }] : [])),
  );
}

/** What the model is told after a config entry's fixes (README "Errors"): only a person can mend a config entry. */
export const FIX_BY_A_PERSON = "Only the person running the workbench can do this (retrying will not help); use other servers' tools meanwhile.";

/**
 * The failure of connecting a server that has problems: `ENV_MISSING` when a variable is unset, else
 * `SECRET_MISSING` when a stored secret is missing, else `CONFIG_INVALID`; `failure.kind` is `misconfigured` with the problems as fields. Nothing is started.
 * `person` ends the hint, after the fixes: what the reader does next (the model's words by default).
 */
export function serverProblemError(label: string, problems: readonly ServerProblem[], person = FIX_BY_A_PERSON): WorkbenchError {
  const code = serverProblemCode(problems);
  const failure = { kind: 'misconfigured' as const, problems: [...problems] };
  if (problems.length === 1) {
    const [p] = problems as [ServerProblem];
    return new WorkbenchError(code, `${label} cannot start: ${p.path}: ${p.message}.`, { failure, hint: `To fix: ${p.fix}. ${person}` });
  }
  return new WorkbenchError(code, `${label} cannot start: its config entry has ${problems.length} problems.`, {
    failure,
    hint: `To fix: ${problems.map((p) => `${p.path}: ${p.fix}`).join('; ')}. ${person}`,
    details: problems.map((p) => `${p.path}: ${p.message}`),
  });
}

/** The error code of a server with these problems, as serverProblemError gives it. */
export function serverProblemCode(problems: readonly ServerProblem[]): 'ENV_MISSING' | 'SECRET_MISSING' | 'CONFIG_INVALID' {
  return problems.some((p) => p.kind === 'env-missing') ? 'ENV_MISSING' : problems.some((p) => p.kind === 'secret-missing') ? 'SECRET_MISSING' : 'CONFIG_INVALID';
}

export function brokenServerWarning(toolbox: string, server: string, problems: readonly ServerProblem[]): string {
  const what = problems.map((p) => `${p.path}: ${p.message}; to fix: ${p.fix}`).join(' — ');
  return `server "${server}" of toolbox "${toolbox}" cannot start until its config is fixed (the other servers work): ${what}`;
}

/**
 * One error listing every server problem of the config (for `validate`), or undefined when there is none. When all
 * of them are unset variables it is the `ENV_MISSING` error naming every variable at once; otherwise `CONFIG_INVALID`.
 */
export function configProblemsError(config: Pick<WorkbenchConfig, 'source' | 'toolboxes'>): WorkbenchError | undefined {
  const problems = brokenServers(config).flatMap((b) => b.problems);
  if (problems.length === 0) return undefined;
  if (problems.every((p) => p.kind === 'env-missing')) {
    return missingVariablesError(problems.flatMap((p) => (p.variables ?? []).map((name) => ({ name, path: p.path }))), config.source);
  }
  const count = problems.length === 1 ? '1 problem that keeps a server' : `${problems.length} problems that keep servers`;
  const code = problems.every((p) => p.kind === 'secret-missing') ? 'SECRET_MISSING' : 'CONFIG_INVALID';
  // The unset variables among other problems are still listed as such (`validate --json`'s `variables`).
  const variables = [...new Set(problems.flatMap((p) => p.variables ?? []))];
  return new WorkbenchError(code, `${config.source} has ${count} from starting (the other servers work):`, {
    details: problems.map((p) => `${p.path}: ${p.message}; to fix: ${p.fix}`),
    variables,
  });
}

/**
 * The error that keeps `serve` from starting when no server of the config could ever start (there is at least one,
 * and every one has problems), naming every problem at once; undefined otherwise.
 */
export function noServerCanStartError(config: Pick<WorkbenchConfig, 'source' | 'toolboxes'>): WorkbenchError | undefined {
  const servers = config.toolboxes.flatMap((t) => t.servers);
  if (servers.length === 0 || servers.some((s) => !s.problems)) return undefined;
  const all = configProblemsError(config)!;
  return new WorkbenchError(all.code, `No server of ${config.source} can start, so the workbench does not start. ${all.message}`, { details: all.details, variables: all.variables });
}
