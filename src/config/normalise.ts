import { normaliseOverrides, type RawToolOverride, type RawToolset } from './catalog-settings.js';
import type { RawSearch } from './search-settings.js';
import type { OAuthConfig, ServerConfig, ToolChanges, ToolboxConfig } from './types.js';

// ---------------------------------------------------------------------------------------------------------------
// Shapes of the document after schema validation.

interface RawServer {
  type?: 'stdio' | 'http' | 'sse';
  transport?: 'stdio' | 'http' | 'sse';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  inheritEnv?: boolean;
  url?: string;
  headers?: Record<string, string>;
  auth?: 'oauth' | Partial<OAuthConfig>;
  toolFilters?: string[];
  disabledTools?: string[];
  disabledPrompts?: string[];
  timeoutMs?: number;
  connectTimeoutMs?: number;
  toolOverrides?: Record<string, RawToolOverride>;
  shared?: boolean;
  catalogCache?: boolean;
  toolChanges?: ToolChanges;
  quarantine?: boolean;
}

interface RawToolbox {
  description?: string;
  mcpServers: Record<string, RawServer>;
  disabledTools?: string[];
  disabledPrompts?: string[];
  toolOverrides?: Record<string, RawToolOverride>;
  catalogBudget?: number;
  openWaitMs?: number;
  useToolWaitMs?: number;
  toolChanges?: ToolChanges;
}

export interface RawConfig {
  toolboxes: Record<string, RawToolbox>;
  toolsets?: Record<string, RawToolset>;
  catalogBudget?: number;
  openWaitMs?: number;
  useToolWaitMs?: number;
  toolChanges?: ToolChanges;
  search?: RawSearch;
}

export function normaliseToolbox(name: string, raw: RawToolbox): ToolboxConfig {
  return {
    name,
    description: raw.description ?? '',
    disabledTools: [...(raw.disabledTools ?? [])],
    ...(raw.disabledPrompts && { disabledPrompts: [...raw.disabledPrompts] }),
    ...(raw.toolOverrides && { toolOverrides: normaliseOverrides(raw.toolOverrides) }),
    ...(raw.catalogBudget !== undefined && { catalogBudget: raw.catalogBudget }),
    ...(raw.openWaitMs !== undefined && { openWaitMs: raw.openWaitMs }),
    ...(raw.useToolWaitMs !== undefined && { useToolWaitMs: raw.useToolWaitMs }),
    ...(raw.toolChanges !== undefined && { toolChanges: raw.toolChanges }),
    servers: Object.entries(raw.mcpServers).map(([serverName, server]) => normaliseServer(serverName, server)),
  };
}

function normaliseServer(name: string, raw: RawServer): ServerConfig {
  const common = {
    name,
    disabledTools: [...(raw.disabledTools ?? [])],
    ...(raw.disabledPrompts && { disabledPrompts: [...raw.disabledPrompts] }),
    ...(raw.toolOverrides && { toolOverrides: normaliseOverrides(raw.toolOverrides) }),
    ...(raw.toolFilters !== undefined && { toolFilters: [...raw.toolFilters] }),
    ...(raw.timeoutMs !== undefined && { timeoutMs: raw.timeoutMs }),
    ...(raw.connectTimeoutMs !== undefined && { connectTimeoutMs: raw.connectTimeoutMs }),
    shared: raw.shared ?? false,
    ...(raw.catalogCache === false && { catalogCache: false as const }),
    ...(raw.toolChanges !== undefined && { toolChanges: raw.toolChanges }),
    ...(raw.quarantine === true && { quarantine: true as const }),
  };
  const type = raw.type ?? raw.transport ?? 'stdio';
  if (type === 'stdio') {
    return {
      ...common,
      type,
      // The schema's oneOf guarantees a command for stdio servers.
      command: raw.command ?? '',
      args: [...(raw.args ?? [])],
      env: { ...raw.env },
      ...(raw.cwd !== undefined && { cwd: raw.cwd }),
      inheritEnv: raw.inheritEnv ?? false,
    };
  }
  const auth = normaliseAuth(raw.auth);
  return { ...common, type, url: raw.url ?? '', headers: { ...raw.headers }, ...(auth && { auth }) };
}

/** `"oauth"` is the default flow; an object keeps what it says, with the authorization-code grant unless it names one. */
function normaliseAuth(raw: RawServer['auth']): OAuthConfig | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'oauth') return { grantType: 'authorization_code' };
  return { ...structuredClone(raw), grantType: raw.grantType ?? 'authorization_code' };
}
