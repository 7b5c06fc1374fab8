import { InvalidArgumentError, Option, type Command } from 'commander';
import { nearestWord } from '../shared/edit-distance.js';
import { WorkbenchError } from '../errors.js';
import { exitCodeFor, splitList, type CliContext } from './context.js';
import { serve } from './serve.js';
import { parsePositiveInt, serveHttp } from './serve-http.js';
import { serveSettings, type ServeRuntimeFlags } from './settings.js';

/** What commander hands the `serve` action: the runtime's flags and the HTTP ones. */
interface ServeFlags extends ServeRuntimeFlags {
  http?: string;
  token?: string;
  allowOrigin?: string[];
  maxSessions?: number;
  sessionIdleTimeout?: number;
  metrics?: boolean;
}

/**
 * `mcp-workbench serve` (the default command): stdio, or Streamable HTTP with `--http`. The process exits with the
 * serving code once the children are gone; unknown leading words and near-miss options are usage errors (exit 2).
 */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve', { isDefault: true })
    .description('run the workbench as an MCP server on stdio (the default command), or over Streamable HTTP with --http')
    .option('-c, --config <file>', 'config file (or $WORKBENCH_CONFIG); required: servers start only from a config you name')
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
    .action(async (flags: ServeFlags, cmd: Command) => {
      try {
        checkLeftovers(program, cmd, ctx);
        // Children are gone; lingering handles (stdin) must not keep the process alive.
        process.exit(await runServe(flags, ctx));
      } catch (error) {
        ctx.fail(error);
        process.exit(exitCodeFor(error));
      }
    });
}

/** Serves on stdio or HTTP as the flags say; resolves with the exit code once serving has ended. */
async function runServe(flags: ServeFlags, ctx: CliContext): Promise<number> {
  const settings = serveSettings(flags, ctx);
  if (flags.http === undefined && (flags.token !== undefined || flags.allowOrigin || flags.maxSessions || flags.sessionIdleTimeout || flags.metrics)) {
    ctx.log.warn('--token, --allow-origin, --max-sessions, --session-idle-timeout and --metrics only apply with --http; ignoring them');
  }
  if (flags.http === undefined) return serve(settings);
  return serveHttp(settings, {
    listen: flags.http,
    token: flags.token,
    allowOrigins: flags.allowOrigin,
    maxSessions: flags.maxSessions,
    sessionIdleSeconds: flags.sessionIdleTimeout,
    metrics: flags.metrics === true,
  });
}

/**
 * What `serve` does with arguments it does not know. A leading word that is not an option is a mistyped command
 * (`mcp-workbench valdate`), and an unknown option within a small edit distance of one of serve's own (`--htp`) is a
 * mistyped option: both are usage errors, so nothing is ever served on a guess. Other unknown options are ones an MCP
 * host may add of its own: warned about on stderr, never failing the start.
 * @throws WorkbenchError USAGE naming the mistyped word and the nearest valid one.
 */
function checkLeftovers(program: Command, cmd: Command, ctx: CliContext): void {
  const args = cmd.args;
  const first = args[0];
  if (first !== undefined && !first.startsWith('-')) {
    const commands = program.commands.map((c) => c.name());
    const near = nearestWord(first, commands);
    throw new WorkbenchError('USAGE', `unknown command "${first}"${near ? ` (did you mean "${near}"?)` : ''} (commands: ${commands.join(', ')}; see mcp-workbench --help)`);
  }
  const known = [...cmd.options, ...program.options].flatMap((o) => (o.long ? [o.long.slice(2)] : [])).concat('help');
  for (const arg of args) {
    if (!arg.startsWith('--') || arg === '--') continue;
    const flag = arg.slice(2).split('=')[0]!;
    const near = nearestWord(flag, known);
    if (near !== undefined) {
      throw new WorkbenchError('USAGE', `unknown option "--${flag}" (did you mean "--${near}"?); nothing was started (see mcp-workbench serve --help)`);
    }
  }
  if (args.length > 0) ctx.log.warn(`ignoring unknown option(s): ${args.join(' ')} (see mcp-workbench --help)`, { event: 'unknown_options', options: args.join(' ') });
}

/** `--catalog-budget`: the same bounds as the config's catalogBudget (see workbench-config.schema.json). */
function parseCatalogBudget(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1000 || n > 10_000_000) {
    throw new InvalidArgumentError(`expected a whole number of characters from 1000 to 10000000, got "${value}"`);
  }
  return n;
}
