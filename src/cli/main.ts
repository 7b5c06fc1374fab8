#!/usr/bin/env node
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { isWorkbenchError } from '../errors.js';
import { VERSION } from '../version.js';
import { EXIT_FAILURE, EXIT_USAGE, createCliContext, splitList } from './context.js';
import { serve } from './serve.js';
import { parsePositiveInt, serveHttp } from './serve-http.js';
import { registerToolsCommand } from './tools.js';
import { toolsetWarnings } from '../catalog/toolsets.js';
import { formatValidateReport, validateConfig } from './validate.js';
import { registerMigrateCommand } from './migrate.js';
import { registerDoctorCommand } from './doctor.js';
import { nearestWord } from '../config/text.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log.js';
import { registerSecretCommand } from './secret.js';
import { registerAuthCommand } from './auth.js';
import { registerInitCommand } from './init.js';
import { registerServerCommand } from './server.js';
import { resolveSecretsPath } from '../secrets/secrets-path.js';
import { homedir } from 'node:os';

/**
 * commander wiring and printing only. Exit codes: 0 success, 1 failure, 2 usage error.
 * Commands that live in their own file export `register…Command(program, ctx)` and are registered below.
 */
const ctx = createCliContext();
const { env, log } = ctx;

/**
 * What `serve` does with arguments it does not know. A leading word that is not an option is a mistyped command
 * (`mcp-workbench valdate`), and an unknown option within a small edit distance of one of serve's own (`--htp`) is a
 * mistyped option: both are usage errors, so nothing is ever served on a guess. Other unknown options are ones an MCP
 * host may add of its own: warned about on stderr, never failing the start.
 */
function checkLeftovers(cmd: Command): boolean {
  const args = cmd.args;
  const first = args[0];
  if (first !== undefined && !first.startsWith('-')) {
    const commands = program.commands.map((c) => c.name());
    const near = nearestWord(first, commands);
    log.error(`unknown command "${first}"${near ? ` (did you mean "${near}"?)` : ''} (commands: ${commands.join(', ')}; see mcp-workbench --help)`);
    process.exitCode = EXIT_USAGE;
    return false;
  }
  const known = [...cmd.options, ...program.options].flatMap((o) => (o.long ? [o.long.slice(2)] : [])).concat('help');
  for (const arg of args) {
    if (!arg.startsWith('--') || arg === '--') continue;
    const flag = arg.slice(2).split('=')[0]!;
    const near = nearestWord(flag, known);
    if (near !== undefined) {
      log.error(`unknown option "--${flag}" (did you mean "--${near}"?); nothing was started (see mcp-workbench serve --help)`);
      process.exitCode = EXIT_USAGE;
      return false;
    }
  }
  if (args.length > 0) log.warn(`ignoring unknown option(s): ${args.join(' ')} (see mcp-workbench --help)`);
  return true;
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

/** `--catalog-budget`: the same bounds as the config's catalogBudget (see workbench-config.schema.json). */
function parseCatalogBudget(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1000 || n > 10_000_000) {
    throw new InvalidArgumentError(`expected a whole number of characters from 1000 to 10000000, got "${value}"`);
  }
  return n;
}

const program = new Command()
  .name('mcp-workbench')
  .description('An MCP server that puts many MCP servers behind two tools: open_toolbox and use_tool.')
  .version(VERSION, '-V, --version')
  // `-v` printed the version before 0.11; it still does (not shown in --help).
  .addOption(new Option('-v').hideHelp())
  .addOption(new Option('--log-level <level>', 'stderr log level (default: $WORKBENCH_LOG_LEVEL, else info); debug also logs each call').choices(LOG_LEVELS))
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

program
  .command('serve', { isDefault: true })
  .description('run the workbench as an MCP server on stdio (the default command), or over Streamable HTTP with --http')
  .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
  .addOption(new Option('--disabled-tools <names>', 'comma-separated canonical tool names or globs to hide').argParser(splitList))
  .option('--state-file <file>', 'tool state file (default: $WORKBENCH_STATE_FILE, else ~/.mcp-workbench/tool-state.json)')
  .option('--management-tools', 'also offer list_all_tools and enable_tools to the client')
  .addOption(new Option('--toolset <names>', 'limit the session to the tools of these toolsets (comma-separated or repeated)').argParser(splitList))
  .option('--project <dir>', 'directory of the project file .mcp-workbench.json (default: the start directory)')
  .addOption(new Option('--catalog-budget <chars>', 'most characters an open_toolbox answer may take (default: config catalogBudget, else 20000)').argParser(parseCatalogBudget))
  .option('--no-catalog-cache', 'do not read or write the catalog cache ($MCP_WORKBENCH_CACHE_DIR, else $XDG_CACHE_HOME/mcp-workbench, else ~/.cache/mcp-workbench)')
  .option('--no-browser', 'never open a browser for an OAuth sign-in: a server that needs one fails at once, naming `mcp-workbench auth login <toolbox>/<server>`')
  .option('--http <[host:]port>', 'serve Streamable HTTP on /mcp instead of stdio (host defaults to 127.0.0.1; port 0 picks a free port)')
  .option('--token <token>', 'bearer token every HTTP request must carry; comma-separated tokens are separate users (default: $WORKBENCH_TOKEN, which is preferred: options show in ps)')
  .addOption(new Option('--allow-origin <origins>', 'browser origins to allow besides localhost (repeatable or comma-separated)').argParser(splitList))
  .addOption(new Option('--max-sessions <n>', 'most concurrent HTTP sessions (default 32)').argParser(parsePositiveInt))
  .addOption(new Option('--session-idle-timeout <seconds>', 'close an HTTP session idle this long: no request of its own answered or arriving; an open GET stream is not activity (default 600)').argParser(parsePositiveInt))
  .option('--metrics', 'with --http: Prometheus metrics at /metrics, behind the same token (calls, latency, sessions, connected servers)')
  .option('--audit-log <path>', 'append one JSON line per tool call and toolbox open to this file (never argument or result values)')
  .addOption(new Option('--audit-log-max-bytes <n>', 'rotate the audit log at this size (default 10485760)').argParser(parsePositiveInt))
  .addOption(new Option('--audit-log-keep <n>', 'rotated audit logs to keep: PATH.1 … PATH.N (default 5)').argParser(parsePositiveInt))
  .allowUnknownOption()
  .allowExcessArguments()
  .action(
    async (
      opts: {
        config?: string;
        disabledTools?: string[];
        stateFile?: string;
        managementTools?: boolean;
        toolset?: string[];
        project?: string;
        catalogBudget?: number;
        catalogCache?: boolean;
        browser?: boolean;
        http?: string;
        token?: string;
        allowOrigin?: string[];
        maxSessions?: number;
        sessionIdleTimeout?: number;
        metrics?: boolean;
        auditLog?: string;
        auditLogMaxBytes?: number;
        auditLogKeep?: number;
      },
      cmd: Command,
    ) => {
      if (!checkLeftovers(cmd)) return;
      try {
        const common = {
          config: opts.config,
          disabledTools: opts.disabledTools,
          stateFile: opts.stateFile,
          managementTools: opts.managementTools === true,
          toolsets: opts.toolset,
          project: opts.project,
          watchConfig: true,
          serving: true,
          catalogBudget: opts.catalogBudget,
          catalogCache: opts.catalogCache,
          browser: opts.browser,
          maxMessageBytes: maxMessageBytes(),
          observer: ctx.callLogger(),
          ...(opts.auditLog !== undefined && { auditLog: { path: resolve(ctx.cwd, opts.auditLog), maxBytes: opts.auditLogMaxBytes, keep: opts.auditLogKeep } }),
          env,
          cwd: ctx.cwd,
          log,
          secrets: ctx.secretSource,
          secretsFile: resolveSecretsPath({ env, homedir: env.HOME || homedir(), cwd: ctx.cwd }).path,
        };
        if (opts.http === undefined && (opts.token !== undefined || opts.allowOrigin || opts.maxSessions || opts.sessionIdleTimeout || opts.metrics)) {
          log.warn('--token, --allow-origin, --max-sessions, --session-idle-timeout and --metrics only apply with --http; ignoring them');
        }
        const code =
          opts.http === undefined
            ? await serve(common)
            : await serveHttp({
                ...common,
                listen: opts.http,
                token: opts.token,
                allowOrigins: opts.allowOrigin,
                maxSessions: opts.maxSessions,
                sessionIdleSeconds: opts.sessionIdleTimeout,
                metrics: opts.metrics === true,
              });
        // Children are gone; lingering handles (stdin) must not keep the process alive.
        process.exit(code);
      } catch (error) {
        ctx.fail(error);
        process.exit(EXIT_FAILURE);
      }
    },
  );

program
  .command('validate')
  .description('check the config (schema, names, environment variables) without starting anything')
  .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
  .option('--project <dir>', 'directory of the project file .mcp-workbench.json (default: the current directory)')
  .option('--json', 'print the result as JSON (secrets are not printed)')
  .action(async (opts: { config?: string; project?: string; json?: boolean }) => {
    try {
      const report = await validateConfig({ config: opts.config, project: opts.project, env, cwd: ctx.cwd, secrets: ctx.secretSource });
      for (const warning of [...report.config.warnings, ...toolsetWarnings(report.config)]) log.warn(warning);
      if (opts.json) {
        const summary = {
          path: report.path,
          valid: true,
          warnings: [...report.config.warnings, ...toolsetWarnings(report.config)],
          toolboxes: report.config.toolboxes.map((t) => ({ name: t.name, servers: t.servers.map((s) => ({ name: s.name, type: s.type })) })),
          toolsets: (report.config.toolsets ?? []).map((t) => ({ name: t.name, tools: t.tools, origin: t.origin })),
          ...(report.config.project && { project: report.config.project.source }),
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

registerToolsCommand(program, ctx);

registerMigrateCommand(program, ctx);
registerDoctorCommand(program, ctx);
registerSecretCommand(program, ctx);
registerAuthCommand(program, ctx);
registerInitCommand(program, ctx);
registerServerCommand(program, ctx);

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
