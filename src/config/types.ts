/**
 * The validated, env-expanded configuration the rest of the workbench works from. Produced only by `loadConfig`
 * (or `parseConfig`); every optional field of the file has been normalised here so consumers never re-apply defaults.
 */
export interface ServerCommon {
  /** Server name as written in the config (also the middle part of canonical tool names). */
  name: string;
  /** Names or `*` globs of downstream tools to include; `undefined` means all. */
  toolFilters?: string[];
  /** Names or `*` globs of downstream tools to hide (downstream names, or canonical names). */
  disabledTools: string[];
  /** Per-call timeout in milliseconds, if configured. */
  timeoutMs?: number;
  /** Connect (spawn + initialize + first tools/list) timeout in milliseconds, if configured. */
  connectTimeoutMs?: number;
}

export interface StdioServerConfig extends ServerCommon {
  type: 'stdio';
  command: string;
  args: string[];
  /** Extra environment for the child, already expanded. */
  env: Record<string, string>;
  cwd?: string;
  /** Pass the workbench's whole environment instead of the safe default subset. */
  inheritEnv: boolean;
}

export interface RemoteServerConfig extends ServerCommon {
  type: 'http' | 'sse';
  url: string;
  /** Request headers, already expanded. Never logged. */
  headers: Record<string, string>;
}

export type ServerConfig = StdioServerConfig | RemoteServerConfig;

export interface ToolboxConfig {
  name: string;
  description: string;
  disabledTools: string[];
  /** Characters an open_toolbox answer about this toolbox may take, if configured. */
  catalogBudget?: number;
  /** Servers in config order. */
  servers: ServerConfig[];
}

export interface WorkbenchConfig {
  /** Absolute path of the file this came from (or a label for in-memory configs). */
  source: string;
  /** Toolboxes in config order. */
  toolboxes: ToolboxConfig[];
  /** Default `catalogBudget` for every toolbox, if configured. */
  catalogBudget?: number;
  /** Non-fatal findings (deprecations) that the caller should show on stderr. */
  warnings: string[];
}
