import { Command, Option } from 'commander';
import { isWorkbenchError } from '../errors.js';
import { CLIENT_KINDS } from '../migrate/import-client.js';
import { runMigrate, type MigrateOptions, type MigrateReport } from '../migrate/run.js';
import { errorJson, exitCodeFor, type CliContext } from './context.js';
import { configFilePath } from './settings.js';

export { runMigrate, type MigrateOptions, type MigrateReport } from '../migrate/run.js';

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
    .action(async (file: string | undefined, flags: Omit<MigrateOptions, 'env' | 'cwd' | 'file' | 'configPath'> & { config?: string; json?: boolean }) => {
      const { config, ...opts } = flags;
      try {
        const configPath = configFilePath(config, ctx);
        const report = await runMigrate({ ...opts, configPath, ...(file !== undefined && { file }), env: ctx.env, cwd: ctx.cwd, secretStore: ctx.secretStore });
        ctx.print(opts.json ? JSON.stringify(report, null, 2) : formatMigrateReport(report, opts.write === true));
      } catch (error) {
        if (opts.json && isWorkbenchError(error)) {
          ctx.print(JSON.stringify({ ok: false, code: error.code, message: error.message, details: error.details, ...errorJson(error) }, null, 2));
          process.exitCode = exitCodeFor(error);
        } else {
          // The error leads with its cause; one about the result says itself that it would not validate.
          ctx.fail(error);
        }
      }
    });
}
