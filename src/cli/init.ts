import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { readConfigFile, saveConfigFile } from '../migrate/config-file.js';
import { starterConfigText } from '../migrate/server-edit.js';
import type { CliContext } from './context.js';
import { schemaReference } from '../migrate/run.js';
import { configFilePath } from './settings.js';
import { folderBlocker, fsReason } from '../shared/read-only.js';

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
 *   when its folder cannot be made (naming what is in the way) or writing fails; with `force` the old file is kept as
 *   `<file>.bak-<timestamp>`.
 */
export async function runInit(path: string, options: { force?: boolean }, log?: Logger): Promise<InitReport> {
  // The folder first: under a file (a path that cannot exist), reading would fail without naming what is in the way.
  await makeFolderFor(path);
  const existing = await readConfigFile(path);
  if (existing && options.force !== true) {
    throw new WorkbenchError('CONFIG_UNWRITABLE', `${path} already exists; nothing was written. Pass --force to replace it (the old file is kept as a backup), or choose another file with --config.`);
  }
  const saved = await saveConfigFile(path, starterConfigText(schemaReference(path)), existing?.bytes, undefined, { ...(log && { log }) });
  return { path, replaced: existing !== undefined, ...(saved.backup !== undefined && { backup: saved.backup }) };
}

/** Creates the folder of `path`; a failure names the part of its path in the way (a file, a folder not writable). */
async function makeFolderFor(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
  } catch (error) {
    const blocker = await folderBlocker(dirname(path));
    const why = blocker ? `${blocker.reason}. ${blocker.fix[0]!.toUpperCase()}${blocker.fix.slice(1)}` : `${fsReason(error)}. Fix the permissions of its parent`;
    throw new WorkbenchError('CONFIG_UNWRITABLE', `Could not create the folder ${dirname(path)} for ${path}: ${why}, or choose another file with --config. Nothing was written.`, { cause: error });
  }
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
        ctx.fail(error);
      }
    });
}
