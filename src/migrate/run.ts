import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatJsonPath } from '../config/expand-env.js';
import { parseConfig } from '../config/load.js';
import { missingCommandProblems } from '../clients/command-check.js';
import { jsonFileText, parseJsonDocument, parseJsonText } from '../config/parse-json.js';
import { NAME_PATTERN, NAME_RULE } from '../config/text.js';
import { WorkbenchError } from '../errors.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { type ConfigEdit } from './config-edit.js';
import { readConfigFile, saveConfigFile } from './config-file.js';
import { CLIENT_LABELS, defaultClientConfigPaths, importClientServers, type ClientKind } from './import-client.js';
import { importIntoConfigText, migrateConfigText } from './migrate.js';
import { sanitizeName } from './server-names.js';
import { type MovedSecret, moveLiteralSecrets } from './store-secrets.js';
import { migrateRedactor } from './literal-secrets.js';
import { redactDeep } from '../shared/redact.js';
import { readOnlyReason } from '../shared/read-only.js';
import { unifiedDiff } from './text-diff.js';

/**
 * What `mcp-workbench migrate` does, without the command line: bring a config up to date, or import another MCP
 * client's servers into one toolbox (`--from`). The command (cli/migrate.ts) parses options and prints the report.
 */

export interface MigrateOptions {
  /** The workbench config to change, as the command line resolved it (the same file `serve` would read). */
  configPath: string;
  write?: boolean;
  from?: ClientKind;
  /** The client config file (with `from`); default: the client's usual location. */
  file?: string;
  toolbox?: string;
  description?: string;
  project?: string;
  merge?: boolean;
  /** `store`: move literal credentials of imported entries into the secret store (with `write`; else only shown). */
  secrets?: 'store';
  /** Opens the secret store (for `secrets: "store"` with `write`). */
  secretStore?: () => Promise<SecretStore>;
  env: Record<string, string | undefined>;
  cwd: string;
  platform?: NodeJS.Platform;
  now?: Date;
}

export interface MigrateReport {
  action: 'migrate' | 'import';
  /** The workbench config that was (or would be) changed. */
  path: string;
  /** The client config read (import only). */
  from?: { client: ClientKind; path: string };
  status: 'changed' | 'unchanged';
  created: boolean;
  written: boolean;
  backup?: string;
  changes: ConfigEdit['changes'];
  notes: string[];
  variables: { required: string[]; optional: string[]; unset: string[]; about: Record<string, string> };
  /** `--secrets store`: the secrets the imported entries now refer to (names only), and whether they were stored. */
  secrets?: { names: string[]; stored: boolean };
  diff: string;
}

/**
 * Computes (and with `write`, saves) a migration or an import. Returns the report; never prints.
 *
 * @throws WorkbenchError `USAGE` for option combinations that make no sense or a toolbox that exists (without
 *   `merge`); `CONFIG_NOT_FOUND` when the file to migrate or import does not exist; the loader's errors when the
 *   result would not be valid (nothing is written then); `CONFIG_UNREADABLE` when reading or writing fails.
 */
export async function runMigrate(options: MigrateOptions): Promise<MigrateReport> {
  const path = options.configPath;
  const existing = await readConfigFile(path);
  const plan = options.from === undefined ? ownMigration(options, path, existing) : await importPlan(options, options.from, path, existing);
  const { edit, moved } = plan;
  const changed = edit.after !== edit.before;
  const report: MigrateReport = {
    action: options.from === undefined ? 'migrate' : 'import',
    path,
    ...(plan.from && { from: plan.from }),
    status: changed ? 'changed' : 'unchanged',
    created: changed && !existing,
    written: false,
    changes: edit.changes,
    notes: [...edit.notes, ...missingOnThisMachine(edit.after, path, options)],
    variables: { ...edit.variables, unset: edit.variables.required.filter((name) => options.env[name] === undefined) },
    ...(options.secrets === 'store' && { secrets: { names: moved.map((m) => m.name), stored: false } }),
    diff: unifiedDiff(edit.before, edit.after, existing ? path : '/dev/null', `${path} (${options.from === undefined ? 'migrated' : 'with imported servers'})`),
  };
  if (options.write && changed) await save(report, plan, options, existing?.bytes);
  // Nothing printed shows a credential (README "Secrets"): not one already in the config, in the client config read,
  // or in an import with --secrets store before --write — in the diff, the notes or --json.
  return redactDeep(report, migrateRedactor([documentOf(edit.before), documentOf(edit.after), plan.source]));
}

/**
 * Commands and folders the result names that this machine does not have (a server copied from another machine's
 * client config, `uvx` not installed): `validate` reports them, so the migration says so first, server by server —
 * the file is still written (the entry is right once the command is installed). Only the imported toolbox's servers
 * for an import.
 */
function missingOnThisMachine(text: string, path: string, options: MigrateOptions): string[] {
  let config;
  try {
    config = parseConfig(parseJsonText(text).value, path, options.env);
  } catch {
    return []; // a result that does not load is refused on its own, with its problems
  }
  const problems = [...missingCommandProblems(config, options.env)].filter(([where]) => options.toolbox === undefined || where.startsWith(`${options.toolbox}/`));
  return problems.map(([where, problem]) => `${where}: ${problem.path}: ${problem.message}; on this machine validate and doctor report it until you ${problem.fix}`);
}

/** What a migration or an import would change, and the credentials it moves into the secret store. */
interface Plan {
  edit: ConfigEdit;
  from?: MigrateReport['from'];
  moved: MovedSecret[];
  /** The client config read (import only): its credentials are never printed either. */
  source?: unknown;
}

function documentOf(text: string): unknown {
  try {
    return parseJsonText(text).value;
  } catch {
    return undefined; // a new file: nothing before
  }
}

type ExistingFile = Awaited<ReturnType<typeof readConfigFile>>;

/** `migrate` without `--from`: the config itself brought up to date. */
function ownMigration(options: MigrateOptions, path: string, existing: ExistingFile): Plan {
  for (const [flag, given] of [['--toolbox', options.toolbox], ['--description', options.description], ['--project', options.project], ['--merge', options.merge], ['--secrets', options.secrets]] as const) {
    if (given !== undefined) throw new WorkbenchError('USAGE', `${flag} is only used with --from <client>.`);
  }
  if (options.file !== undefined) {
    throw new WorkbenchError('USAGE', `"${options.file}": a file argument is only used with --from <client>; choose the config to migrate with --config <file>.`);
  }
  if (!existing) {
    throw new WorkbenchError('CONFIG_NOT_FOUND', `Config file not found: ${path}. Point to the file to migrate with --config <file> or WORKBENCH_CONFIG.`);
  }
  return { edit: migrateConfigText(jsonFileText(existing.bytes, path), path), moved: [] };
}

/** `migrate --from <client>`: that client's servers as one toolbox of the config. */
async function importPlan(options: MigrateOptions, client: ClientKind, path: string, existing: ExistingFile): Promise<Plan> {
  const toolbox = options.toolbox;
  if (toolbox === undefined) throw new WorkbenchError('USAGE', `--from ${client} needs --toolbox <name>: the toolbox to put the imported servers in.`);
  if (!NAME_PATTERN.test(toolbox)) {
    throw new WorkbenchError('USAGE', `--toolbox "${toolbox}" is not a valid toolbox name (${NAME_RULE}); for example "${sanitizeName(toolbox, 'imported')}".`);
  }
  const { file, source } = await readClientConfig(options, client, toolbox);
  const { value: raw, duplicateKeys } = parseJsonDocument(jsonFileText(source.bytes, file, 'CONFIG_PARSE', `the ${CLIENT_LABELS[client]} config`), file);
  let imported = importClientServers(client, raw, {
    source: file,
    self: [fileURLToPath(new URL('../cli/main.js', import.meta.url))],
    toolbox,
    ...(options.project !== undefined && { project: resolve(options.cwd, options.project) }),
    ...(options.secrets && { secrets: options.secrets }),
  });
  // The client reads its file with JSON.parse, which keeps the last of a key written twice: so does the import, saying so.
  const twice = duplicateKeys.map((key) => `${formatJsonPath(key)} is written more than once in ${file}; the last one is imported, as ${CLIENT_LABELS[client]} itself reads it`);
  if (twice.length > 0) imported = { ...imported, notes: [...twice, ...imported.notes] };
  let moved: MovedSecret[] = [];
  if (options.secrets === 'store') {
    const taken = moveLiteralSecrets(toolbox, imported.servers);
    imported = { ...imported, servers: taken.servers, notes: [...imported.notes, ...taken.notes] };
    moved = taken.moved;
  }
  const edit = importIntoConfigText(existing && jsonFileText(existing.bytes, path), path, imported, {
    toolbox,
    from: file,
    merge: options.merge === true,
    ...(options.description !== undefined && { description: options.description }),
    ...(!existing && { schema: schemaReference(path) }),
  });
  return { edit, from: { client, path: file }, moved, source: raw };
}

/** The client's config: the file given, else the first of its usual places that exists. */
async function readClientConfig(options: MigrateOptions, client: ClientKind, toolbox: string): Promise<{ file: string; source: NonNullable<ExistingFile> }> {
  const candidates =
    options.file !== undefined ? [resolve(options.cwd, options.file)] : defaultClientConfigPaths(client, options.env, options.platform ?? process.platform, options.cwd);
  for (const candidate of candidates) {
    const source = await readConfigFile(candidate, () => `Pass the file itself: mcp-workbench migrate --from ${client} <file> --toolbox ${toolbox}.`);
    if (source) return { file: candidate, source };
  }
  throw new WorkbenchError(
    'CONFIG_NOT_FOUND',
    `No ${CLIENT_LABELS[client]} config at ${candidates.join(' or ')}. Pass its path: mcp-workbench migrate --from ${client} <file> --toolbox ${toolbox}.`,
  );
}

/** `--write`: the moved secrets first (a saved config referring to missing secrets would fail those servers), then the config. */
async function save(report: MigrateReport, plan: Plan, options: MigrateOptions, before: Buffer | undefined): Promise<void> {
  if (plan.moved.length > 0) {
    // A config that will be refused is refused before the secrets move: none is stored for a config never written.
    const readOnly = before === undefined ? undefined : await readOnlyReason(report.path);
    if (readOnly !== undefined) {
      throw new WorkbenchError('CONFIG_UNWRITABLE', `Did not write ${report.path}: ${readOnly}. Nothing was stored in the secret store either. Make it writable (chmod u+w ${report.path}), or write to another file with --config.`);
    }
    if (!options.secretStore) throw new WorkbenchError('SECRET_STORE_FAILED', 'no secret store to move the imported credentials into; nothing was written.');
    const store = await options.secretStore();
    for (const secret of plan.moved) await store.set(secret.name, secret.value);
    report.secrets = { names: plan.moved.map((m) => m.name), stored: true };
  }
  const saved = await saveConfigFile(report.path, plan.edit.after, before, options.now);
  report.written = true;
  if (saved.backup !== undefined) report.backup = saved.backup;
}

/** `$schema` for a new config: the schema shipped with this installation, relative to the config's folder. */
export function schemaReference(configPath: string): string {
  const schema = fileURLToPath(new URL('../../workbench-config.schema.json', import.meta.url));
  const path = relative(dirname(configPath), schema).split(sep).join('/');
  return path.startsWith('.') || path.startsWith('/') ? path : `./${path}`;
}

