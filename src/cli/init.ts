import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { readConfigFile, saveConfigFile } from '../migrate/config-file.js';
import { starterConfigText } from '../migrate/server-edit.js';
import { EXIT_FAILURE, errorFields, type CliContext } from './context.js';
import { schemaReference } from '../migrate/run.js';
import { configFilePath } from './settings.js';

export interface InitReport {
  path: string;
  /** The previous file, kept when `--force` replaced one. */
  backup?: string;
  replaced: boolean;
}

/**
 * Writes the starter config (see {@link starterConfigText}) to `path` (the config path, resolved by the caller with
 * {@link configFilePath}), creating its folder.
 *
 * @throws WorkbenchError `CONFIG_UNWRITABLE` when the file exists and `force` is not set (nothing is written), or
 *   when writing fails; with `force` the old file is kept as `<file>.bak-<timestamp>`.
 */
export async function runInit(path: string, options: { force?: boolean }, log?: Logger): Promise<InitReport> {
  const existing = await readConfigFile(path);
  if (existing && options.force !== true) {
    throw new WorkbenchError('CONFIG_UNWRITABLE', `${path} already exists; nothing was written. Pass --force to replace it (the old file is kept as a backup), or choose another file with --config.`);
  }
  await mkdir(dirname(path), { recursive: true });
  const saved = await saveConfigFile(path, starterConfigText(schemaReference(path)), existing?.bytes, undefined, { ...(log && { log }) });
  return { path, replaced: existing !== undefined, ...(saved.backup !== undefined && { backup: saved.backup }) };
}

/** `mcp-workbench init [--config PATH] [--force]`: exit 0 when written, 1 when the file exists or cannot be written. */
export function registerInitCommand(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('write a commented starter config (never replaces an existing file without --force)')
    .option('-c, --config <file>', 'where to write it (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .option('--force', 'replace an existing file (it is kept as <file>.bak-<timestamp>)')
    .action(async (opts: { config?: string; force?: boolean }) => {
      try {
        const report = await runInit(configFilePath(opts.config, ctx), opts, ctx.log);
        ctx.print(
          [
            report.replaced ? `Replaced ${report.path}; the previous file is kept as ${report.backup}.` : `Created ${report.path}.`,
            `Check it with:  mcp-workbench validate --config ${report.path}`,
            `Add a server:   mcp-workbench server add --config ${report.path} <toolbox> <name> -- <command> [args…]`,
            // The config is always named: servers start only from a config named by --config or WORKBENCH_CONFIG.
            `Serve it:       mcp-workbench --config ${report.path}   (the command to give your MCP client; README "Use it from your MCP client")`,
          ].join('\n'),
        );
      } catch (error) {
        ctx.log.error(errorMessage(error), errorFields(error));
        process.exitCode = EXIT_FAILURE;
      }
    });
}
