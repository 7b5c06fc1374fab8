import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { CLIENT_KINDS, CLIENT_LABELS, defaultClientConfigPaths, importClientServers, type ClientKind } from '../migrate/import-client.js';
import { maskLiteralSecrets } from '../migrate/entry-converter.js';
import { sanitizeName } from '../migrate/server-names.js';
import { parseConfigJson } from '../config/load.js';
import { resolveConfigPath } from '../config/config-path.js';
import { NAME_PATTERN, NAME_RULE } from '../config/text.js';
import { importIntoConfigText, migrateConfigText } from '../migrate/migrate.js';
import { readConfigFile, saveConfigFile } from '../migrate/config-file.js';
import { type ConfigEdit } from '../migrate/config-edit.js';
import { unifiedDiff } from '../migrate/text-diff.js';
import { type MovedSecret, moveLiteralSecrets } from '../migrate/store-secrets.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import { EXIT_FAILURE, EXIT_USAGE, type CliContext } from './context.js';

export interface MigrateOptions {
  config?: string;
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
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  const existing = await readConfigFile(path);
  let edit: ConfigEdit;
  let from: MigrateReport['from'];
  let moved: MovedSecret[] = [];

  if (options.from === undefined) {
    for (const [flag, given] of [['--toolbox', options.toolbox], ['--description', options.description], ['--project', options.project], ['--merge', options.merge], ['--secrets', options.secrets]] as const) {
      if (given !== undefined) throw new WorkbenchError('USAGE', `${flag} is only used with --from <client>.`);
    }
    if (options.file !== undefined) {
      throw new WorkbenchError('USAGE', `"${options.file}": a file argument is only used with --from <client>; choose the config to migrate with --config <file>.`);
    }
    if (!existing) {
      throw new WorkbenchError('CONFIG_NOT_FOUND', `Config file not found: ${path}. Point to the file to migrate with --config <file> or WORKBENCH_CONFIG.`);
    }
    edit = migrateConfigText(existing.text, path);
  } else {
    const client = options.from;
    const toolbox = options.toolbox;
    if (toolbox === undefined) throw new WorkbenchError('USAGE', `--from ${client} needs --toolbox <name>: the toolbox to put the imported servers in.`);
    if (!NAME_PATTERN.test(toolbox)) {
      throw new WorkbenchError('USAGE', `--toolbox "${toolbox}" is not a valid toolbox name (${NAME_RULE}); for example "${sanitizeName(toolbox, 'imported')}".`);
    }
    const candidates =
      options.file !== undefined ? [resolve(options.cwd, options.file)] : defaultClientConfigPaths(client, options.env, options.platform ?? process.platform, options.cwd);
    let file = candidates[0]!;
    let source: Awaited<ReturnType<typeof readConfigFile>>;
    for (const candidate of candidates) {
      source = await readConfigFile(candidate);
      file = candidate;
      if (source) break;
    }
    if (!source) {
      throw new WorkbenchError(
        'CONFIG_NOT_FOUND',
        `No ${CLIENT_LABELS[client]} config at ${candidates.join(' or ')}. Pass its path: mcp-workbench migrate --from ${client} <file> --toolbox ${toolbox}.`,
      );
    }
    let imported = importClientServers(client, parseConfigJson(source.text, file), {
      source: file,
      self: [fileURLToPath(new URL('./main.js', import.meta.url))],
      toolbox,
      ...(options.project !== undefined && { project: resolve(options.cwd, options.project) }),
      ...(options.secrets && { secrets: options.secrets }),
    });
    if (options.secrets === 'store') {
      const taken = moveLiteralSecrets(toolbox, imported.servers);
      imported = { ...imported, servers: taken.servers, notes: [...imported.notes, ...taken.notes] };
      moved = taken.moved;
    }
    from = { client, path: file };
    edit = importIntoConfigText(existing?.text, path, imported, {
      toolbox,
      from: file,
      merge: options.merge === true,
      ...(options.description !== undefined && { description: options.description }),
      ...(!existing && { schema: schemaReference(path) }),
    });
  }

  const changed = edit.after !== edit.before;
  const report: MigrateReport = {
    action: options.from === undefined ? 'migrate' : 'import',
    path,
    ...(from && { from }),
    status: changed ? 'changed' : 'unchanged',
    created: changed && !existing,
    written: false,
    changes: edit.changes,
    notes: edit.notes,
    variables: { ...edit.variables, unset: edit.variables.required.filter((name) => options.env[name] === undefined) },
    ...(options.secrets === 'store' && { secrets: { names: moved.map((m) => m.name), stored: false } }),
    // Credentials already in the config (or in an import with --secrets store before --write) are never printed.
    diff: maskLiteralSecrets(unifiedDiff(edit.before, edit.after, existing ? path : '/dev/null', `${path} (${options.from === undefined ? 'migrated' : 'with imported servers'})`)),
  };
  if (options.write && changed) {
    // The secrets first: a saved config that refers to secrets not yet stored would fail those servers.
    if (moved.length > 0) {
      if (!options.secretStore) throw new WorkbenchError('SECRET_STORE_FAILED', 'no secret store to move the imported credentials into; nothing was written.');
      const store = await options.secretStore();
      for (const secret of moved) await store.set(secret.name, secret.value);
      report.secrets = { names: moved.map((m) => m.name), stored: true };
    }
    const saved = await saveConfigFile(path, edit.after, existing?.bytes, options.now);
    report.written = true;
    if (saved.backup !== undefined) report.backup = saved.backup;
  }
  return report;
}

/** `$schema` for a new config: the schema shipped with this installation, relative to the config's folder. */
export function schemaReference(configPath: string): string {
  const schema = fileURLToPath(new URL('../../workbench-config.schema.json', import.meta.url));
  const path = relative(dirname(configPath), schema).split(sep).join('/');
  return path.startsWith('.') || path.startsWith('/') ? path : `./${path}`;
}

export function formatMigrateReport(report: MigrateReport, write: boolean): string {
  const lines: string[] = [];
  if (report.status === 'unchanged') {
    lines.push(
      report.action === 'migrate'
        ? `${report.path} is already a valid 0.10 config; nothing to change.`
        : `${report.path}: nothing to add; every imported server is already in the toolbox.`,
    );
  } else {
    lines.push(report.diff.trimEnd(), '');
    lines.push(report.action === 'migrate' ? 'Changes:' : `Changes (servers from ${report.from?.path}):`);
    for (const change of report.changes) lines.push(`  - ${change.path}: ${change.message}`);
  }
  if (report.notes.length > 0) {
    lines.push('', 'Notes:');
    for (const note of report.notes) lines.push(`  - ${note}`);
  }
  const { required, optional, unset, about } = report.variables;
  if (required.length > 0 || optional.length > 0) {
    lines.push('', 'Environment variables this config uses (set them where the workbench runs, e.g. in the "env" of its entry in your MCP client):');
    const why = (name: string): string => (about[name] !== undefined ? ` — ${about[name]}` : '');
    for (const name of required) lines.push(`  - ${name}${unset.includes(name) ? ' (not set in this shell)' : ''}${why(name)}`);
    for (const name of optional) lines.push(`  - ${name} (optional: it has a default)${why(name)}`);
  }
  if (report.secrets && report.secrets.names.length > 0) {
    lines.push('', report.secrets.stored ? 'Stored in the secret store (see mcp-workbench secret list):' : 'With --write, these would be stored in the secret store:');
    for (const name of report.secrets.names) lines.push(`  - ${name}`);
  }
  if (report.status === 'changed') {
    lines.push('');
    if (report.written) {
      lines.push(report.created ? `Created ${report.path}.` : `Saved ${report.path}; the original is kept as ${report.backup}.`);
      lines.push(`Check it with: mcp-workbench validate --config ${report.path}`);
    } else if (!write) {
      lines.push(`Nothing was written. Run again with --write to save it${report.created ? '' : ` (the original is kept as ${report.path}.bak-<timestamp>)`}.`);
    }
  }
  return lines.join('\n');
}

/** `mcp-workbench migrate`: see {@link runMigrate}. Exit 0 when done (or nothing to do), 1 on failure, 2 on usage errors. */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('update a 0.9 config to 0.10, or import the MCP servers of another client into a toolbox; prints the diff')
    .argument('[file]', 'with --from: the client config file (default: the client\'s usual location)')
    .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .option('--write', 'save the result (an existing file is kept as <file>.bak-<timestamp>)')
    .addOption(new Option('--from <client>', 'import the servers of this client\'s config file').choices(CLIENT_KINDS))
    .option('--toolbox <name>', 'with --from: the toolbox to put the imported servers in')
    .option('--description <text>', 'with --from: the new toolbox\'s description')
    .option('--project <path>', 'with --from claude-code and ~/.claude.json: also import this project\'s servers')
    .option('--merge', 'with --from: add to an existing toolbox of that name (its servers are never replaced)')
    .addOption(new Option('--secrets <mode>', 'with --from: "store" moves literal tokens into the secret store and writes ${secret:NAME} in their place').choices(['store']))
    .option('--json', 'print the result as JSON')
    .action(async (file: string | undefined, opts: Omit<MigrateOptions, 'env' | 'cwd' | 'file'> & { json?: boolean }) => {
      try {
        const report = await runMigrate({ ...opts, ...(file !== undefined && { file }), env: ctx.env, cwd: ctx.cwd, secretStore: ctx.secretStore });
        ctx.print(opts.json ? JSON.stringify(report, null, 2) : formatMigrateReport(report, opts.write === true));
      } catch (error) {
        const usage = isWorkbenchError(error, 'USAGE');
        if (opts.json && isWorkbenchError(error)) {
          ctx.print(JSON.stringify({ ok: false, code: error.code, message: error.message, details: error.details }, null, 2));
        } else if (isWorkbenchError(error, 'CONFIG_INVALID') || isWorkbenchError(error, 'ENV_MISSING')) {
          ctx.log.error(`migrate cannot produce a valid config; nothing was written. Fix these by hand:\n${error.toDisplayString()}`);
        } else {
          ctx.log.error(errorMessage(error));
        }
        process.exitCode = usage ? EXIT_USAGE : EXIT_FAILURE;
      }
    });
}
