import { readFile } from 'node:fs/promises';
import { WorkbenchError } from '../errors.js';
import { type Secret, argSecrets, envSecrets, headerSecrets, urlCredentials, urlSecrets } from '../shared/redact.js';
import { clashMessage, normaliseToolsets, toolsetNameClashes } from './catalog-settings.js';
import { unreadableConfigAdvice, type resolveConfigPath } from './config-path.js';
import { type EnvLike, type JsonPath, type SecretUse, expandConfigEnv, formatJsonPath } from './expand-env.js';
import { type RawConfig, normaliseToolbox } from './normalise.js';
import { remoteEndpoint } from './remote-endpoint.js';
import { duplicateKeyMessage, jsonFileText, parseJsonDocument } from './parse-json.js';
import type { SecretSource } from './secret-source.js';
import { isRecord } from './text.js';
import type { OAuthConfig, ToolboxConfig, WorkbenchConfig } from './types.js';
import { findServerProblems, serverKey, withProblems } from './server-problems.js';
import { searchSettings } from './search-settings.js';
import { type Problem, findProblems, inDocumentOrder, invalidError } from './validate.js';
import { errnoWords, reasonOf } from '../shared/errno.js';
import { shellQuote } from '../shared/shell-quote.js';

/**
 * Reads, parses, validates, env-expands and normalises the config file at `path`, which should be absolute (as
 * returned by {@link resolveConfigPath}); it becomes `source` of the result as given.
 *
 * @throws WorkbenchError
 *   - `CONFIG_NOT_FOUND` when the file does not exist (the message says how to create or point to one);
 *   - `CONFIG_UNREADABLE` when it exists but cannot be read (permissions, a directory, …), with the reason;
 *   - `CONFIG_PARSE` when it is not JSON, with line, column and the offending line;
 *   - anything {@link parseConfig} throws.
 */
export async function loadConfig(path: string, env: EnvLike, options: LoadConfigOptions = {}): Promise<WorkbenchConfig> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw readError(path, error);
  }
  const text = jsonFileText(bytes, path);
  const document = parseJsonDocument(text, path);
  // The store is opened only for a config that refers to it: probing a keychain costs time and may ask the user.
  const secrets = options.secrets && text.includes('${secret:') ? await options.secrets() : undefined;
  return parseConfig(document.value, path, env, { duplicateKeys: document.duplicateKeys, ...(secrets && { secrets }) });
}

export interface LoadConfigOptions {
  /**
   * Opens the secret store that `${secret:NAME}` is looked up in; called once, and only when the file holds such a
   * reference. Without it every such reference is a problem of its server.
   */
  secrets?: () => Promise<SecretSource>;
}

/**
 * Parses config file text as JSON (a leading byte-order mark is ignored). Exposed for callers that edit the raw
 * document, such as `migrate`.
 *
 * @throws WorkbenchError `CONFIG_PARSE` with the reason, line and column, and an excerpt of the offending line
 *   with a caret; hints are added for comments, trailing commas and single quotes.
 */
export function parseConfigJson(text: string, source: string): unknown {
  return parseJsonDocument(text, source).value;
}

/**
 * Validates and normalises an already parsed config document: rejects `toolMode: "dynamic"`, checks the document
 * against workbench-config.schema.json and the rules a schema cannot express, expands `${VAR}` /
 * `${VAR:-default}` from `env`, and returns the normalised {@link WorkbenchConfig} (toolboxes and servers in
 * document order, every default applied, `warnings` for deprecations and literal `${`). `raw` is not modified.
 *
 * A problem that belongs to one server — an unset variable without a default, a malformed `url`, a `command` or
 * `cwd` left empty by expansion — does not fail the config: that server carries it in `problems` (see
 * config/server-problems; `configProblemsError` lists them all for `validate`).
 *
 * @throws WorkbenchError
 *   - `CONFIG_DYNAMIC_MODE` for `toolMode: "dynamic"` (removed in 0.10.0), pointing to `migrate` and MIGRATION.md;
 *   - `CONFIG_INVALID` listing every violation of the document's structure at once in `details`, each as
 *     `<path>: <problem>`.
 *   No message ever contains an expanded value.
 */
export function parseConfig(raw: unknown, source: string, env: EnvLike, options: ParseConfigOptions = {}): WorkbenchConfig {
  if (isRecord(raw) && raw.toolMode === 'dynamic') throw dynamicModeError(source);

  const duplicates = (options.duplicateKeys ?? []).map((path): Problem => ({ path, message: duplicateKeyMessage() }));
  const problems: Problem[] = duplicates.length > 0 ? inDocumentOrder([...duplicates, ...findProblems(raw)], raw) : findProblems(raw);
  if (isRecord(raw) && isRecord(raw.toolboxes)) {
    for (const name of toolsetNameClashes(raw.toolsets, new Set(Object.keys(raw.toolboxes)))) {
      problems.push({ path: ['toolsets', name], message: clashMessage(name, '') });
    }
  }
  if (problems.length > 0) throw invalidWithUnset(source, problems, raw, env, options.secrets);

  const warnings: string[] = [];
  if (isRecord(raw) && raw.toolMode === 'proxy') {
    warnings.push(
      `"toolMode": "proxy" in ${source} is deprecated and has no effect: the workbench is always proxy-only ` +
        'since 0.10.0. Remove the key.',
    );
  }

  const expanded = expandConfigEnv(raw, env, options.secrets);
  warnings.push(...expanded.warnings);
  // Validation succeeded on the same shape (expansion only replaces strings with strings).
  const document = expanded.config as RawConfig;
  const serverProblems = findServerProblems(document, expanded.missing, expanded.missingSecrets, options.secrets, { raw, env });

  const toolboxes = Object.entries(document.toolboxes).map(([name, toolbox]) =>
    withSecretEntries(withProblems(normaliseToolbox(name, toolbox), serverProblems), expanded.secretUses),
  );
  if (toolboxes.length === 0) warnings.push(`${source} defines no toolboxes; the workbench will have nothing to open.`);
  for (const toolbox of toolboxes) {
    if (toolbox.servers.length === 0) warnings.push(`Toolbox "${toolbox.name}" has no servers.`);
  }
  warnings.push(...credentialWarnings(toolboxes));
  const search = searchSettings(document.search, env, options.secrets);
  warnings.push(...search.warnings);
  return {
    source,
    toolboxes,
    ...(document.toolsets && { toolsets: normaliseToolsets(document.toolsets, 'config') }),
    ...(document.catalogBudget !== undefined && { catalogBudget: document.catalogBudget }),
    ...(document.openWaitMs !== undefined && { openWaitMs: document.openWaitMs }),
    ...(document.useToolWaitMs !== undefined && { useToolWaitMs: document.useToolWaitMs }),
    ...(document.toolChanges !== undefined && { toolChanges: document.toolChanges }),
    ...(search.search && { search: search.search }),
    warnings,
    secrets: [...expanded.secrets, ...configuredSecrets(toolboxes), ...search.secrets],
  };
}

/**
 * The structure problems, with the unset variables and missing secrets the document uses added, so one run of
 * `validate` names everything to fix (and `--json` lists the variables) rather than the variables only after the
 * structure is mended.
 */
function invalidWithUnset(source: string, problems: Problem[], raw: unknown, env: EnvLike, secrets: SecretSource | undefined): WorkbenchError {
  const { missing, missingSecrets } = expandConfigEnv(raw, env, secrets);
  return invalidError(source, problems, {
    details: [
      ...missing.map((m) => `${m.path}: \${${m.name}} is not set and has no default`),
      ...missingSecrets.map((m) => `${m.path}: \${secret:${m.name}} is not in the secret store`),
    ],
    variables: [...new Set(missing.map((m) => m.name))],
  });
}

export interface ParseConfigOptions {
  /** Keys written twice in the document (from {@link parseJsonDocument}); each is reported as a problem. */
  duplicateKeys?: readonly JsonPath[];
  /** Where `${secret:NAME}` is looked up; without it every such reference is a problem of its server. */
  secrets?: SecretSource;
}

/**
 * Marks the `env` entries (stdio) or headers (remote) that hold a stored secret as credentials of their server,
 * whatever their names say: the catalog cache keys its lists by them as it does by `API_TOKEN` (README "Catalog
 * cache").
 */
function withSecretEntries(toolbox: ToolboxConfig, uses: readonly SecretUse[]): ToolboxConfig {
  if (uses.length === 0) return toolbox;
  const entries = new Map<string, Set<string>>();
  for (const use of uses) {
    if (use.toolbox !== toolbox.name || !use.entry) continue;
    const key = serverKey(use.toolbox, use.server);
    entries.set(key, (entries.get(key) ?? new Set()).add(use.entry.name));
  }
  if (entries.size === 0) return toolbox;
  return {
    ...toolbox,
    servers: toolbox.servers.map((server) => {
      const names = entries.get(serverKey(toolbox.name, server.name));
      return names ? { ...server, secretEntries: [...names].sort() } : server;
    }),
  };
}

/**
 * What the entries hold that output must never show, by meaning, literal or expanded alike: `env` values and
 * `--flag=value` arguments with secret names, secret header values, URL credentials (README "Secrets").
 */
function configuredSecrets(toolboxes: readonly ToolboxConfig[]): Secret[] {
  const secrets: Secret[] = [];
  for (const server of toolboxes.flatMap((t) => t.servers)) {
    if (server.type === 'stdio') {
      secrets.push(...envSecrets(server.env), ...argSecrets(server.args));
      continue;
    }
    secrets.push(...urlSecrets(server.url));
    for (const [name, value] of Object.entries(remoteEndpoint(server).headers)) secrets.push(...headerSecrets(name, value));
    if (server.auth) secrets.push(...authSecrets(server.auth));
  }
  return secrets;
}

/** The credentials of an `auth` object: client secrets, the private key, the assertion and the ID token. */
function authSecrets(auth: OAuthConfig): Secret[] {
  const found: Secret[] = [];
  const add = (value: string | undefined, label: string): void => {
    if (value !== undefined) found.push({ value, label });
  };
  add(auth.clientSecret, 'auth clientSecret');
  add(auth.privateKeyPem, 'auth privateKeyPem');
  add(auth.assertion, 'auth assertion');
  add(auth.identityProvider?.clientSecret, 'auth identityProvider.clientSecret');
  add(auth.identityProvider?.idToken, 'auth identityProvider.idToken');
  return found;
}

/** A warning per URL that carries credentials (user info, secret-looking query parameters); never their values. */
function credentialWarnings(toolboxes: readonly ToolboxConfig[]): string[] {
  const warnings: string[] = [];
  for (const toolbox of toolboxes) {
    for (const server of toolbox.servers) {
      if (server.type === 'stdio') continue;
      const found = urlCredentials(server.url);
      const what = [
        ...(found.userInfo ? ['user info (user:password@)'] : []),
        ...found.params.map((name) => `query parameter ${JSON.stringify(name)}`),
      ];
      if (what.length === 0) continue;
      warnings.push(
        `${formatJsonPath(['toolboxes', toolbox.name, 'mcpServers', server.name, 'url'])}: the URL carries credentials ` +
          `(${what.join(', ')}). URLs end up in logs, proxies and error messages; put the credential in "headers" ` +
          'with ${VAR} instead, e.g. "headers": { "Authorization": "Bearer ${API_TOKEN}" }. The workbench hides it in ' +
          'its own output, but the server and anything between may not.',
      );
    }
  }
  return warnings;
}

function dynamicModeError(source: string): WorkbenchError {
  return new WorkbenchError(
    'CONFIG_DYNAMIC_MODE',
    `${source} sets "toolMode": "dynamic", but dynamic mode was removed in 0.10.0. The workbench is proxy-only: ` +
      'downstream tools are no longer registered on the workbench itself; clients reach them through ' +
      `open_toolbox and use_tool. Run \`mcp-workbench migrate --config ${shellQuote(source)} --write\` to update ` +
      'the file, or see MIGRATION.md.',
  );
}

function readError(path: string, error: unknown): WorkbenchError {
  const code = isRecord(error) && typeof error.code === 'string' ? error.code : undefined;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new WorkbenchError(
      'CONFIG_NOT_FOUND',
      `Config file not found: ${path}. Create it (workbench-config.example.json shows the format), or point to ` +
        'another file with --config <path> or the WORKBENCH_CONFIG environment variable.',
      { cause: error },
    );
  }
  const reason = errnoWords(code) ?? reasonOf(error);
  return new WorkbenchError('CONFIG_UNREADABLE', `Cannot read config file ${path}: ${reason}. ${unreadableConfigAdvice(path, code)}`, { cause: error });
}
