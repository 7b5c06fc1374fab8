import type { WorkbenchConfig } from './types.js';

/** Settings a toolbox may give for itself, with a default for every toolbox at the config's top level. */
export type ToolboxSetting = 'openWaitMs' | 'useToolWaitMs' | 'catalogBudget';

/** The toolbox's own value of `key`, else the top level's; undefined when neither sets it (README "Configuration"). */
export function toolboxSetting(config: WorkbenchConfig, toolbox: string, key: ToolboxSetting): number | undefined {
  return config.toolboxes.find((t) => t.name === toolbox)?.[key] ?? config[key];
}
