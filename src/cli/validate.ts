import { loadConfig } from '../config/load.js';
import { resolveConfigPath } from '../config/config-path.js';
import { configProblemsError } from '../config/server-problems.js';
import { applyProject, loadProjectFile, resolveProjectPath } from '../config/project-file.js';
import type { SecretSource } from '../config/secret-source.js';
import type { WorkbenchConfig } from '../config/types.js';

export interface ValidateReport {
  path: string;
  config: WorkbenchConfig;
}

/**
 * Loads and checks the config and the project file (`.mcp-workbench.json` in `cwd`, or `--project DIR`) exactly as
 * `serve` would; throws the loader's WorkbenchError when either is invalid, and one error listing every problem that
 * keeps a server from starting (unset variables, malformed URLs), which `serve` would only warn about.
 */
export async function validateConfig(options: {
  config?: string;
  project?: string;
  env: Record<string, string | undefined>;
  cwd: string;
  secrets?: () => Promise<SecretSource>;
}): Promise<ValidateReport> {
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  const config = await loadConfig(path, options.env, { secrets: options.secrets });
  const broken = configProblemsError(config);
  if (broken) throw broken;
  const project = await loadProjectFile(resolveProjectPath({ flag: options.project, cwd: options.cwd }));
  return { path, config: applyProject(config, project) };
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
