import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { WorkbenchConfig } from '../config/types.js';

export interface ValidateReport {
  path: string;
  config: WorkbenchConfig;
}

/** Loads and checks the config exactly as `serve` would; throws the loader's WorkbenchError when it is invalid. */
export async function validateConfig(options: { config?: string; env: Record<string, string | undefined>; cwd: string }): Promise<ValidateReport> {
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  return { path, config: await loadConfig(path, options.env) };
}

export function formatValidateReport(report: ValidateReport): string {
  const { config } = report;
  const servers = config.toolboxes.reduce((n, t) => n + t.servers.length, 0);
  const lines = [`${report.path}: valid (${config.toolboxes.length} toolbox(es), ${servers} server(s))`];
  for (const toolbox of config.toolboxes) {
    lines.push(`  ${toolbox.name}: ${toolbox.servers.map((s) => `${s.name} (${s.type})`).join(', ') || '(no servers)'}`);
  }
  return lines.join('\n');
}
