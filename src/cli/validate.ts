import type { Command } from 'commander';
import { patternWarnings } from '../catalog/toolsets.js';
import { isWorkbenchError } from '../errors.js';
import { missingCommandProblems } from '../clients/command-check.js';
import { loadConfig } from '../config/load.js';
import { configProblemsError } from '../config/server-problems.js';
import { applyProject, loadProjectFile } from '../config/project-file.js';
import type { WorkbenchConfig } from '../config/types.js';
import { errorJson, exitCodeFor, type CliContext } from './context.js';
import { configSources, type ConfigSources } from './settings.js';
import { commandProblemsDespite, withMoreDetails } from './validate-all.js';

export interface ValidateReport {
  path: string;
  config: WorkbenchConfig;
}

/**
 * Loads and checks the config and the project file (`.mcp-workbench.json` in `cwd`, or `--project DIR`) exactly as
 * `serve` would; throws the loader's WorkbenchError when either is invalid, and one error listing every problem that
 * keeps a server from starting (unset variables, malformed URLs, a command not found), which `serve` would only warn
 * about (a command not found: when a server is first used).
 */
export async function validateConfig(
  sources: Pick<ConfigSources, 'configPath' | 'project' | 'secrets'>,
  env: Record<string, string | undefined>,
): Promise<ValidateReport> {
  const path = sources.configPath;
  let config: WorkbenchConfig;
  try {
    config = await loadConfig(path, env, { secrets: sources.secrets });
  } catch (error) {
    // Every problem in one run: sound servers' missing commands, and the project file's problems, listed too.
    const more = isWorkbenchError(error) ? await commandProblemsDespite(path, error, env) : [];
    throw withMoreDetails(error, [...more, ...(await projectProblems(sources))]);
  }
  const broken = configProblemsError(withMissingCommands(config, env));
  if (broken) throw withMoreDetails(broken, await projectProblems(sources));
  const project = await loadProjectFile(sources.project);
  return { path, config: applyProject(config, project) };
}

/** The project file's problems as detail lines of another error (none when it is valid or absent). */
async function projectProblems(sources: Pick<ConfigSources, 'project'>): Promise<string[]> {
  try {
    await loadProjectFile(sources.project);
    return [];
  } catch (error) {
    if (!isWorkbenchError(error)) return [];
    return error.details.length === 0 ? [error.message] : error.details.map((d) => `project file ${sources.project.path}, ${d}`);
  }
}

/** The config with each stdio server whose command cannot be found given that as its problem (validate alone). */
function withMissingCommands(config: WorkbenchConfig, env: Record<string, string | undefined>): WorkbenchConfig {
  const missing = missingCommandProblems(config, env);
  if (missing.size === 0) return config;
  const toolboxes = config.toolboxes.map((toolbox) => ({
    ...toolbox,
    servers: toolbox.servers.map((server) => {
      const problem = missing.get(`${toolbox.name}/${server.name}`);
      return problem ? { ...server, problems: [problem] } : server;
    }),
  }));
  return { ...config, toolboxes };
}

export function formatValidateReport(report: ValidateReport): string {
  const { config } = report;
  const servers = config.toolboxes.reduce((n, t) => n + t.servers.length, 0);
  const lines = [`${report.path}: valid (${config.toolboxes.length} toolbox(es), ${servers} server(s))`];
  for (const toolbox of config.toolboxes) {
    lines.push(`  ${toolbox.name}: ${toolbox.servers.map((s) => `${s.name} (${s.type})`).join(', ') || '(no servers)'}`);
  }
  for (const toolset of config.toolsets ?? []) lines.push(`  ${toolset.name} (toolset${toolset.origin === 'project' ? ' from the project file' : ''}): ${toolset.tools.join(', ')}`);
  if (config.project) lines.push(`  project file: ${config.project.source} (valid)`);
  return lines.join('\n');
}

/** `validate --json`: the summary of a valid config (secrets are not printed). */
export function validateSummary(report: ValidateReport): Record<string, unknown> {
  return {
    path: report.path,
    valid: true,
    warnings: [...report.config.warnings, ...patternWarnings(report.config)],
    toolboxes: report.config.toolboxes.map((t) => ({ name: t.name, servers: t.servers.map((s) => ({ name: s.name, type: s.type })) })),
    toolsets: (report.config.toolsets ?? []).map((t) => ({ name: t.name, tools: t.tools, origin: t.origin })),
    ...(report.config.project && { project: report.config.project.source }),
  };
}

/** `mcp-workbench validate`: exit 0 when the config would serve, 1 otherwise; `--json` prints either outcome. */
export function registerValidateCommand(program: Command, ctx: CliContext): void {
  program
    .command('validate')
    .description('check the config (schema, names, environment variables) without starting anything')
    .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .option('--project <dir>', 'directory of the project file .mcp-workbench.json (default: the current directory)')
    .option('--json', 'print the result as JSON (secrets are not printed)')
    .action(async (opts: { config?: string; project?: string; json?: boolean }) => {
      try {
        const report = await validateConfig({ ...configSources(opts, ctx, false), secrets: ctx.secretSource }, ctx.env);
        for (const warning of [...report.config.warnings, ...patternWarnings(report.config)]) ctx.log.warn(warning);
        ctx.print(opts.json ? JSON.stringify(validateSummary(report), null, 2) : formatValidateReport(report));
      } catch (error) {
        if (opts.json && isWorkbenchError(error)) {
          ctx.print(JSON.stringify({ valid: false, code: error.code, message: error.message, details: error.details, ...errorJson(error) }, null, 2));
          process.exitCode = exitCodeFor(error);
          return;
        }
        ctx.fail(error);
      }
    });
}
