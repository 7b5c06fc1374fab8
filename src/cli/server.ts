import { type Command, InvalidArgumentError, Option } from 'commander';
import { missingCommandProblems } from '../clients/command-check.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { configVariables, type ConfigEdit } from '../migrate/config-edit.js';
import { readConfigFile, saveConfigFile, withConfigLock } from '../migrate/config-file.js';
import { literalSecrets } from '../migrate/literal-secrets.js';
import { addServerText, removeServerText, serverEntry, type ServerSpec } from '../migrate/server-edit.js';
import type { CliContext } from './context.js';
import { configFilePath } from './settings.js';
import { jsonFileText } from '../config/parse-json.js';

/** `--env K=V` (repeatable): the first `=` splits. */
function parseEnvPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected NAME=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

/** `--header K:V` (repeatable): the first `:` splits; spaces around the value are dropped. */
function parseHeaderPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf(':');
  if (at <= 0) throw new InvalidArgumentError(`expected Name:Value, got "${value}"`);
  return { ...previous, [value.slice(0, at).trim()]: value.slice(at + 1).trim() };
}

/**
 * Reads the config, applies `edit` to its text and saves it atomically (no backup: the change is one server, and the
 * file must still hold what was read). Returns the saved path and the edit.
 *
 * @throws WorkbenchError `CONFIG_NOT_FOUND` (with the `init` hint), the edit's errors, `CONFIG_UNWRITABLE`.
 */
async function editConfig(
  path: string,
  edit: (text: string, path: string) => ConfigEdit,
  log: Logger,
): Promise<{ path: string; edit: ConfigEdit }> {
  // Read, edit and write under the config's lock: a concurrent `server add` waits, then edits what this one wrote.
  const existing = await readConfigFile(path);
  if (!existing) throw new WorkbenchError('CONFIG_NOT_FOUND', `Config file not found: ${path}. Create one with: mcp-workbench init --config ${path}`);
  return withConfigLock(path, async () => {
    const current = (await readConfigFile(path)) ?? existing;
    const result = edit(jsonFileText(current.bytes, path), path);
    await saveConfigFile(path, result.after, current.bytes, undefined, { backup: false, locked: true });
    return { path, edit: result };
  }, log);
}

/**
 * `mcp-workbench server add <toolbox> <name> [--env K=V …] -- <command> [args…]`, `server add <toolbox> <name> --url
 * URL [--header K:V …]` and `server remove <toolbox> <name>`: one-server edits of the config that keep its comments,
 * order and formatting. Exit 0 when saved, 1 on failure (nothing written), 2 on usage errors (a name that exists, a
 * toolbox or server that does not).
 */
export function registerServerCommand(program: Command, ctx: CliContext): void {
  const server = program.command('server').description('add a server to a toolbox of the config, or remove one');
  registerServerAddCommand(server, ctx);
  registerServerRemoveCommand(server, ctx);
}

/** What `server add` is given besides its arguments. */
interface AddFlags {
  config?: string;
  env?: Record<string, string>;
  url?: string;
  type?: 'http' | 'sse';
  header?: Record<string, string>;
  description?: string;
}

function registerServerAddCommand(server: Command, ctx: CliContext): void {
  server
    .command('add')
    .description('add a stdio server (-- <command> [args…]) or a remote one (--url URL) to a toolbox, creating the toolbox if needed')
    .argument('<toolbox>', 'toolbox to add it to')
    .argument('<name>', 'the new server\'s name')
    .argument('[command...]', 'after --: the command that starts a stdio server, and its arguments')
    .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .addOption(new Option('--env <NAME=VALUE>', 'an environment variable for a stdio server (repeatable; ${VAR} is expanded at start)').argParser(parseEnvPair))
    .option('--url <url>', 'the URL of a remote server')
    .addOption(new Option('--type <type>', 'the remote transport (default: sse when the URL path ends in /sse, else http)').choices(['http', 'sse']))
    .addOption(new Option('--header <Name:Value>', 'an HTTP header for a remote server (repeatable)').argParser(parseHeaderPair))
    .option('--description <text>', 'the description of a toolbox this creates')
    .action(async (toolbox: string, name: string, command: string[], opts: AddFlags) => {
      try {
        const spec = serverSpec(command, opts);
        const { path, edit } = await editConfig(configFilePath(opts.config, ctx), (text, source) =>
          addServerText(text, source, toolbox, name, spec, opts.description),
          ctx.log,
        );
        ctx.print(formatAdded({ toolbox, name, path, spec, edit }, ctx.env));
      } catch (error) {
        // Every error says itself what was wrong and that nothing was written (a result that would not validate included).
        ctx.fail(error);
      }
    });
}

function registerServerRemoveCommand(server: Command, ctx: CliContext): void {
  server
    .command('remove')
    .description('remove a server from a toolbox')
    .argument('<toolbox>', 'its toolbox')
    .argument('<name>', 'the server')
    .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .action(async (toolbox: string, name: string, opts: { config?: string }) => {
      try {
        const { path, edit } = await editConfig(configFilePath(opts.config, ctx), (text, source) => removeServerText(text, source, toolbox, name), ctx.log);
        ctx.print([`Removed server "${name}" from toolbox "${toolbox}" in ${path}.`, ...edit.notes.map((n) => `  - ${n}`)].join('\n'));
      } catch (error) {
        ctx.fail(error);
      }
    });
}

/**
 * The server `server add` describes: remote with `--url` (and `--type`, `--header`), else stdio from the command after
 * `--` (and `--env`). @throws WorkbenchError USAGE when the flags mix the two kinds or name neither.
 */
function serverSpec(command: string[], opts: AddFlags): ServerSpec {
  if (opts.url !== undefined) {
    if (command.length > 0) throw new WorkbenchError('USAGE', 'give either --url or a command after --, not both.');
    if (opts.env) throw new WorkbenchError('USAGE', '--env is for stdio servers; a remote server takes --header.');
    return { url: opts.url, ...(opts.type && { type: opts.type }), ...(opts.header && { headers: opts.header }) };
  }
  if (command.length === 0) throw new WorkbenchError('USAGE', 'give the command after --, e.g. server add dev memory -- npx -y @modelcontextprotocol/server-memory, or --url URL.');
  if (opts.header || opts.type) throw new WorkbenchError('USAGE', '--header and --type are for remote servers (--url).');
  return { command: command[0]!, args: command.slice(1), ...(opts.env && { env: opts.env }) };
}

/** What `server add` prints: where it was saved, the edit's notes, literal secrets, and variables unset in `env`. */
function formatAdded(
  added: { toolbox: string; name: string; path: string; spec: ServerSpec; edit: ConfigEdit },
  env: Record<string, string | undefined>,
): string {
  const { toolbox, name, path, spec, edit } = added;
  const lines = [`Added server "${name}" to toolbox "${toolbox}" in ${path}.`];
  for (const note of edit.notes) lines.push(`  - ${note}`);
  for (const { what } of literalSecrets(serverEntry(spec))) {
    lines.push(`  - ${what} is written into the file as given; a \${VAR} or \${secret:NAME} reference keeps it out`);
  }
  // Only the added server's variables: the rest of the config's unset ones are not this command's news.
  const own = configVariables({ toolboxes: { [toolbox]: { mcpServers: { [name]: serverEntry(spec) } } } });
  const unset = own.required.filter((v) => env[v] === undefined);
  if (unset.length > 0) lines.push(`  - set ${unset.join(', ')} where the workbench runs (not set in this shell)`);
  else if (spec.command !== undefined) {
    // As `validate` would say it: a command that is not installed here fails the server at its first use.
    const toolboxes = edit.config.toolboxes.filter((t) => t.name === toolbox).map((t) => ({ ...t, servers: t.servers.filter((s) => s.name === name) }));
    for (const problem of missingCommandProblems({ source: path, toolboxes }, env).values()) lines.push(`  - ${problem.path}: ${problem.message}; to fix: ${problem.fix}`);
  }
  return lines.join('\n');
}
