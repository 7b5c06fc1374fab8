#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { errorMessage, isWorkbenchError } from '../errors.js';
import { createLogger, parseLogLevel } from '../log.js';
import { VERSION } from '../version.js';
import { serve } from './serve.js';
import { formatValidateReport, validateConfig } from './validate.js';

/**
 * commander wiring and printing only. Exit codes: 0 success, 1 failure, 2 usage error.
 */
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

const env = process.env as Record<string, string | undefined>;
const log = createLogger({ level: parseLogLevel(env.WORKBENCH_LOG_LEVEL) ?? 'info' });

/** `a, b,,c ` → ['a', 'b', 'c']; the option may also be repeated. */
function splitList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)];
}

/** Options an MCP host may pass that we do not know: warn on stderr, never fail the start. */
function warnUnknown(args: readonly string[]): void {
  const unknown = args.filter((a) => a.startsWith('-'));
  if (unknown.length > 0) log.warn(`ignoring unknown option(s): ${unknown.join(' ')} (see mcp-workbench --help)`);
}

/** WORKBENCH_MAX_MESSAGE_BYTES: a positive integer, else the built-in default (with a warning if it was set). */
function maxMessageBytes(): number | undefined {
  const raw = env.WORKBENCH_MAX_MESSAGE_BYTES;
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  log.warn(`ignoring WORKBENCH_MAX_MESSAGE_BYTES="${raw}": expected a positive whole number of bytes`);
  return undefined;
}

function fail(error: unknown): void {
  log.error(errorMessage(error));
  process.exitCode = EXIT_FAILURE;
}

const program = new Command()
  .name('mcp-workbench')
  .description('An MCP server that puts many MCP servers behind two tools: open_toolbox and use_tool.')
  .version(VERSION, '-v, --version')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

program
  .command('serve', { isDefault: true })
  .description('run the workbench as an MCP server on stdio (the default command)')
  .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
  .addOption(new Option('--disabled-tools <names>', 'comma-separated canonical tool names or globs to hide').argParser(splitList))
  .allowUnknownOption()
  .allowExcessArguments()
  .action(async (opts: { config?: string; disabledTools?: string[] }, cmd: Command) => {
    warnUnknown(cmd.args);
    try {
      const code = await serve({
        config: opts.config,
        disabledTools: opts.disabledTools,
        maxMessageBytes: maxMessageBytes(),
        env,
        cwd: process.cwd(),
        log,
      });
      // Children are gone; lingering handles (stdin) must not keep the process alive.
      process.exit(code);
    } catch (error) {
      fail(error);
      process.exit(EXIT_FAILURE);
    }
  });

program
  .command('validate')
  .description('check the config (schema, names, environment variables) without starting anything')
  .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
  .option('--json', 'print the normalised config summary as JSON (secrets are not printed)')
  .action(async (opts: { config?: string; json?: boolean }) => {
    try {
      const report = await validateConfig({ config: opts.config, env, cwd: process.cwd() });
      for (const warning of report.config.warnings) log.warn(warning);
      if (opts.json) {
        const summary = {
          path: report.path,
          valid: true,
          warnings: report.config.warnings,
          toolboxes: report.config.toolboxes.map((t) => ({ name: t.name, servers: t.servers.map((s) => ({ name: s.name, type: s.type })) })),
        };
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      } else {
        process.stdout.write(`${formatValidateReport(report)}\n`);
      }
    } catch (error) {
      if (opts.json && isWorkbenchError(error)) {
        process.stdout.write(`${JSON.stringify({ valid: false, code: error.code, message: error.message, details: error.details }, null, 2)}\n`);
        process.exitCode = EXIT_FAILURE;
        return;
      }
      fail(error);
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end with code 0 through this path; real usage errors get 2.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    fail(error);
  }
}
