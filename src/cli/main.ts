#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { isWorkbenchError } from '../errors.js';
import { VERSION } from '../version.js';
import { EXIT_FAILURE, EXIT_USAGE, createCliContext, splitList } from './context.js';
import { serve } from './serve.js';
import { formatValidateReport, validateConfig } from './validate.js';

/**
 * commander wiring and printing only. Exit codes: 0 success, 1 failure, 2 usage error.
 * Commands that live in their own file export `register…Command(program, ctx)` and are registered below.
 */
const ctx = createCliContext();
const { env, log } = ctx;

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
        cwd: ctx.cwd,
        log,
      });
      // Children are gone; lingering handles (stdin) must not keep the process alive.
      process.exit(code);
    } catch (error) {
      ctx.fail(error);
      process.exit(EXIT_FAILURE);
    }
  });

program
  .command('validate')
  .description('check the config (schema, names, environment variables) without starting anything')
  .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
  .option('--json', 'print the result as JSON (secrets are not printed)')
  .action(async (opts: { config?: string; json?: boolean }) => {
    try {
      const report = await validateConfig({ config: opts.config, env, cwd: ctx.cwd });
      for (const warning of report.config.warnings) log.warn(warning);
      if (opts.json) {
        const summary = {
          path: report.path,
          valid: true,
          warnings: report.config.warnings,
          toolboxes: report.config.toolboxes.map((t) => ({ name: t.name, servers: t.servers.map((s) => ({ name: s.name, type: s.type })) })),
        };
        ctx.print(JSON.stringify(summary, null, 2));
      } else {
        ctx.print(formatValidateReport(report));
      }
    } catch (error) {
      if (opts.json && isWorkbenchError(error)) {
        ctx.print(JSON.stringify({ valid: false, code: error.code, message: error.message, details: error.details }, null, 2));
        process.exitCode = EXIT_FAILURE;
        return;
      }
      ctx.fail(error);
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end with code 0 through this path; real usage errors get 2.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    ctx.fail(error);
  }
}
