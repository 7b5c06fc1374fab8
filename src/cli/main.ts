#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { VERSION } from '../version.js';
import { EXIT_USAGE, createCliContext } from './context.js';
import { registerServeCommand } from './serve-command.js';
import { registerToolsCommand } from './tools.js';
import { registerValidateCommand } from './validate.js';
import { registerMigrateCommand } from './migrate.js';
import { registerDoctorCommand } from './doctor.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log.js';
import { registerSecretCommand } from './secret.js';
import { registerAuthCommand } from './auth.js';
import { registerInitCommand } from './init.js';
import { registerServerCommand } from './server.js';

/**
 * commander wiring and printing only. Exit codes: 0 success, 1 failure, 2 usage error.
 * Commands that live in their own file export `register…Command(program, ctx)` and are registered below.
 */
const ctx = createCliContext();

const program = new Command()
  .name('mcp-workbench')
  .description('An MCP server that puts many MCP servers behind two tools: open_toolbox and use_tool.')
  .version(VERSION, '-V, --version')
  // `-v` printed the version before 0.11; it still does (not shown in --help).
  .addOption(new Option('-v').hideHelp())
  .addOption(new Option('--log-level <level>', 'stderr log level (default: $WORKBENCH_LOG_LEVEL, else info); debug also logs each call and each --http session').choices(LOG_LEVELS))
  .addOption(new Option('--log-format <format>', 'stderr log lines as text or JSON (default: $WORKBENCH_LOG_FORMAT, else text)').choices(LOG_FORMATS))
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });
// Before any command runs (the options may come before or after the command's name).
program.hook('preAction', () => {
  const { logLevel, logFormat } = program.opts<{ logLevel?: LogLevel; logFormat?: LogFormat }>();
  ctx.setLogging({ level: logLevel, format: logFormat });
});
program.on('option:v', () => {
  process.stdout.write(`${VERSION}\n`);
  process.exit(0);
});

registerServeCommand(program, ctx);
registerValidateCommand(program, ctx);
registerToolsCommand(program, ctx);

registerMigrateCommand(program, ctx);
registerDoctorCommand(program, ctx);
registerSecretCommand(program, ctx);
registerAuthCommand(program, ctx);
registerInitCommand(program, ctx);
registerServerCommand(program, ctx);

// Node ends a process whose event loop has nothing left, even while a command still awaits a promise nothing can settle:
// such a command would end with code 0 and no output, as if it had succeeded. It is told as a failure instead.
let settled = false;
process.once('beforeExit', () => {
  if (settled) return;
  process.stderr.write('mcp-workbench: the command stopped before it finished: it waited for something that could no longer happen. Nothing more was done; run it again with --log-level debug and report the output.\n');
  process.exitCode = 1;
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
} finally {
  settled = true;
}
