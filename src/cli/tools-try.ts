import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Command, InvalidArgumentError, Option } from 'commander';
import { type FullEntry, summaryOf } from '../catalog/catalog-index.js';
import { MAX_SEARCH_LIMIT } from '../catalog/search.js';
import type { WorkbenchConfig } from '../config/types.js';
import { isRecord } from '../config/text.js';
import { outcomeOf } from '../core/call-events.js';
import { errorFieldsOf } from '../core/tool-entry.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import { EXIT_FAILURE, splitList, type CliContext } from './context.js';
import { createRuntime, type Runtime } from './runtime.js';
import { oneShotSettings } from './settings.js';
import { failedServerText } from '../clients/server-failure.js';
import { cliSteps, type CliInvocation } from './next-command.js';
import { errnoCode, errnoWords } from '../shared/errno.js';

/**
 * `mcp-workbench tools search | call`: try tools from a shell, without an MCP client. Both go through the same
 * Workbench as `serve` (open_toolbox's search, use_tool's pipeline), so the same tools are enabled and disabled.
 */
export function registerToolsTryCommands(tools: Command, ctx: CliContext): void {
  const common = (cmd: Command): Command =>
    cmd
      .option('-c, --config <file>', 'config file (or $WORKBENCH_CONFIG); required: servers start only from a config you name')
      .option('--state-file <file>', 'tool state file (default: $WORKBENCH_STATE_FILE, else ~/.mcp-workbench/tool-state.json)')
      .option('--project <dir>', 'directory of the project file .mcp-workbench.json (default: the current directory)')
      .addOption(new Option('--disabled-tools <names>', 'as for serve: comma-separated names or globs').argParser(splitList))
      .addOption(new Option('--toolset <names>', 'as for serve: only the tools of these toolsets (comma-separated or repeated)').argParser(splitList));

  common(tools.command('search <query...>'))
    .description('search the enabled tools by what they do: ranked, with toolbox, server and a one-line description')
    .option('-t, --toolbox <name>', 'only this toolbox (default: every toolbox)')
    .addOption(new Option('--limit <n>', `most results (1–${MAX_SEARCH_LIMIT}, default 5)`).argParser(parseLimit))
    .option('--json', 'machine-readable output')
    .action(async (words: string[], opts: RuntimeFlags & { toolbox?: string; limit?: number; json?: boolean }) => {
      await withRuntime(ctx, opts, async (runtime) => {
        const request = { toolbox_name: opts.toolbox, query: words.join(' '), limit: opts.limit, detail: 'full' } as const;
        const answer = await runtime.workbench.openToolbox(request, undefined, { steps: cliSteps(invocationOf(runtime.config, opts)) });
        const found = answer.result.tools.filter((t): t is FullEntry => 'toolbox_name' in t);
        for (const failure of answer.result.servers_failed) ctx.log.warn(`${failure.server} could not be connected, so its tools were not searched: ${failedServerText(failure)}`);
        for (const pending of answer.result.servers_pending ?? []) ctx.log.warn(`${pending.server} was still starting, so its tools were not searched`);
        // The answer's hint is what the model is told too: matches only by meaning or near spellings, where else to look.
        const hint = answer.result.hint;
        if (opts.json) {
          const results = found.map((t, i) => ({ rank: i + 1, name: t.name, toolbox: t.toolbox_name, server: t.source_server, tool: t.original_name, summary: summaryOf(t) }));
          ctx.print(JSON.stringify({ query: words.join(' '), results, ...(hint !== undefined && { hint }) }, null, 2));
        } else if (found.length === 0) {
          ctx.print(hint ?? 'No enabled tool matched; try other words (a verb and an object).');
        } else {
          ctx.print(hint === undefined ? formatSearch(found) : `${formatSearch(found)}\n\n${hint}`);
        }
        if (answer.isError) process.exitCode = EXIT_FAILURE;
      });
    });

  common(tools.command('call <toolbox> <tool>'))
    .description('call one tool (starting the servers it needs) and print its result; exit 1 when the result is an error')
    .option('--args <json>', 'the arguments as a JSON object (default: {})')
    .option('--args-file <path>', 'read the arguments (a JSON object) from this file')
    .option('--json', 'print the whole result as JSON')
    .action(async (toolbox: string, tool: string, opts: RuntimeFlags & { args?: string; argsFile?: string; json?: boolean }) => {
      let args: Record<string, unknown>;
      try {
        args = await readArguments(opts);
      } catch (error) {
        return ctx.fail(error);
      }
      await withRuntime(ctx, opts, async (runtime) => {
        // Every refusal ends with the command to run next, where the model is told a tool call (README "Command line").
        const result = await runtime.workbench.useTool(toolbox, tool, args, { steps: cliSteps({ ...invocationOf(runtime.config, opts), args: opts.args, argsFile: opts.argsFile, json: opts.json }) });
        // An unknown toolbox is how the command was called, not how the tool answered: a usage error (README), said
        // once, on stderr — the result names the toolboxes there are and the command that lists them.
        const code = outcomeOf(result).code;
        if (code === 'TOOLBOX_NOT_FOUND') throw new WorkbenchError('TOOLBOX_NOT_FOUND', formatResult(result));
        // So is a full name whose server its toolbox does not have: the refusal says so (`unknown`), no server need answer.
        if (code === 'TOOL_NOT_FOUND' && errorFieldsOf(result).unknown === 'server') throw new WorkbenchError('USAGE', formatResult(result));
        ctx.print(opts.json ? JSON.stringify(result, null, 2) : formatResult(result));
        if (result.isError === true) process.exitCode = EXIT_FAILURE;
      });
    });
}

/** The command as given, for the commands its next steps name (see cliSteps). */
function invocationOf(config: WorkbenchConfig, opts: RuntimeFlags): CliInvocation {
  return { configSource: config.source, stateFile: opts.stateFile, project: opts.project, toolsets: opts.toolset, disabledTools: opts.disabledTools };
}

interface RuntimeFlags {
  config?: string;
  stateFile?: string;
  project?: string;
  disabledTools?: string[];
  toolset?: string[];
}

/** Builds a one-shot runtime (no watchers), runs `use`, and always closes every server it started. */
async function withRuntime(ctx: CliContext, opts: RuntimeFlags, use: (runtime: Runtime) => Promise<void>): Promise<void> {
  let runtime: Runtime | undefined;
  try {
    // Connection chatter is noise here; warnings and errors still show.
    const flags = { config: opts.config, stateFile: opts.stateFile, project: opts.project, disabledTools: opts.disabledTools, toolsets: opts.toolset };
    // A server that cannot start names the doctor to run with this config, where the model is told to ask the user.
    runtime = await createRuntime({ ...oneShotSettings(flags, ctx, ctx.callLogger()), startSteps: (config) => cliSteps(invocationOf(config, opts)) });
    await use(runtime);
  } catch (error) {
    ctx.fail(error);
  } finally {
    await runtime?.close();
  }
}

/**
 * `--args` or `--args-file` (not both): a JSON object.
 * @throws WorkbenchError USAGE saying what is wrong and where, FILE_UNREADABLE for a file that cannot be read (nothing
 *   is started then).
 */
async function readArguments(opts: { args?: string; argsFile?: string }): Promise<Record<string, unknown>> {
  if (opts.args !== undefined && opts.argsFile !== undefined) throw new WorkbenchError('USAGE', 'give --args or --args-file, not both');
  let text = opts.args;
  let where = '--args';
  if (opts.argsFile !== undefined) {
    where = opts.argsFile;
    try {
      text = await readFile(opts.argsFile, 'utf8');
    } catch (error) {
      const reason = errnoWords(errnoCode(error)) ?? errorMessage(error);
      // A file that cannot be read is exit 1, as --config's and --state-file's are (README "Command line").
      throw new WorkbenchError(
        'FILE_UNREADABLE',
        `cannot read --args-file ${resolve(opts.argsFile)}: ${reason}. Name a file that holds the arguments as one JSON object, or pass them with --args '{"name": "value"}'.`,
        { cause: error },
      );
    }
  }
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new WorkbenchError('USAGE', `${where} is not valid JSON: ${errorMessage(error)} (arguments are one JSON object, e.g. '{"path": "/tmp"}')`, { cause: error });
  }
  if (!isRecord(value)) throw new WorkbenchError('USAGE', `${where} must be a JSON object of arguments, e.g. '{"path": "/tmp"}'`);
  return value;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_SEARCH_LIMIT) throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_SEARCH_LIMIT}`);
  return n;
}

/** One line per match: rank, canonical name, toolbox/server, and the first sentence of its description. */
export function formatSearch(found: readonly FullEntry[]): string {
  const width = Math.min(Math.max(...found.map((t) => t.name.length)), 60);
  return found.map((t, i) => `${String(i + 1).padStart(2)}. ${t.name.padEnd(width)}  [${t.toolbox_name}/${t.source_server}]  ${summaryOf(t)}`).join('\n');
}

/**
 * A result as text: each text block as it is, other blocks described in one line (never their bytes), and the
 * structured content as JSON when no text block carries it.
 */
export function formatResult(result: CallToolResult): string {
  const lines: string[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        lines.push(block.text);
        break;
      case 'image':
      case 'audio':
        lines.push(`[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`);
        break;
      case 'resource_link':
        lines.push(`[resource link ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
        break;
      case 'resource':
        lines.push('text' in block.resource ? block.resource.text : `[resource ${block.resource.uri}, ${block.resource.mimeType ?? 'binary'}]`);
        break;
      default:
        lines.push(JSON.stringify(block));
    }
  }
  if (result.structuredContent !== undefined && !lines.some((l) => l.trim().length > 0)) lines.push(JSON.stringify(result.structuredContent, null, 2));
  return lines.join('\n');
}
