import type { WorkbenchConfig } from './types.js';

/**
 * Settings a toolbox may give for itself, with a default for every toolbox at the config's top level. (`catalogBudget`
 * is not one: the CLI and the project file come between its two levels; see Discovery.budget.)
 */
export type ToolboxSetting = 'openWaitMs' | 'useToolWaitMs';

/** The toolbox's own value of `key`, else the top level's; undefined when neither sets it (README "Configuration"). */
export function toolboxSetting(config: WorkbenchConfig, toolbox: string, key: ToolboxSetting): number | undefined {
  return config.toolboxes.find((t) => t.name === toolbox)?.[key] ?? config[key];
}
