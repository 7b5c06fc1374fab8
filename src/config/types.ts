import type { ServerProblem } from '../errors.js';
import type { Secret } from '../shared/redact.js';

export type { ServerProblem } from '../errors.js';

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
  /** Names or `*` globs of this server's prompts to hide (its own names, or `{toolbox}__{server}__{prompt}`); absent: none. */
  disabledPrompts?: string[];
  /** Per-call timeout in milliseconds, if configured. */
  timeoutMs?: number;
  /** Connect (spawn + initialize + first tools/list) timeout in milliseconds, if configured. */
  connectTimeoutMs?: number;
  /**
   * What `open_toolbox` shows instead of the server's own text, per downstream name, canonical name or glob.
   * Absent means none.
   */
  toolOverrides?: ToolOverrideRule[];
  /**
   * HTTP serving: one connection for every client session instead of one per session (README "Serving over
   * HTTP"). Over stdio there is only one session, so it changes nothing.
   */
  shared: boolean;
  /** `catalogCache: false`: this server's tool list is neither read from nor written to the catalog cache. */
  catalogCache?: false;
  /** What a new or changed tool of this server does (README "Pinned tool definitions"); the nearest setting wins. */
  toolChanges?: ToolChanges;
  /** `quarantine: true`: every tool of this server is held until its tools are approved. */
  quarantine?: true;
  /**
   * Why this entry cannot start as written (an unset variable, a malformed URL, …); absent when it can. Such a
   * server stays in its toolbox, and connecting it fails at once with these (see config/server-problems).
   */
  problems?: ServerProblem[];
  /**
   * Names of the `env` entries (stdio) or headers (remote) whose value holds a `${secret:NAME}`, sorted; absent when
   * none. They are credentials whatever their names say (the catalog cache keys lists by their values' hash).
   */
  secretEntries?: string[];
}

/** `toolOverrides` entry: fields shown instead of (or, for the suffix and annotations, on top of) the server's. */
export interface ToolOverride {
  title?: string;
  description?: string;
  /** Appended to the (possibly overridden) description, after a space. */
  descriptionSuffix?: string;
  /** Merged key by key over the server's annotations. */
  annotations?: Record<string, unknown>;
}

export interface ToolOverrideRule extends ToolOverride {
  /** The tool name or `*` glob the override is keyed by. */
  pattern: string;
}

/** A named set of tools across toolboxes that works wherever a toolbox name does. */
export interface ToolsetConfig {
  name: string;
  description: string;
  /** Canonical names or `*` globs, in file order. */
  tools: string[];
  /** Where it was defined: the config or the project file. */
  origin: 'config' | 'project';
  /**
   * For a project toolset named like a config toolset: the config toolset's patterns. It only narrows that toolset
   * (a tool belongs to it when both match), so a cloned repository cannot widen what `--toolset` allows.
   */
  within?: string[];
}

/** The per-project file (`.mcp-workbench.json`): it may only narrow and describe, never add servers. */
export interface ProjectConfig {
  /** Absolute path of the file. */
  source: string;
  disabledTools: string[];
  toolsets: ToolsetConfig[];
  /** Canonical names or globs. */
  toolOverrides: ToolOverrideRule[];
  /** Character budget for open_toolbox answers, carried for the catalog-budget feature. */
  catalogBudget?: number;
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
  /**
   * `auth`: sign in as an MCP OAuth client (README "Remote servers behind OAuth"); absent when not configured (a
   * 401 with a Bearer challenge still starts the default flow). Already expanded.
   */
  auth?: OAuthConfig;
}

/** How a remote server is signed in to (`auth: "oauth"` is `{ grantType: "authorization_code" }`). */
export interface OAuthConfig {
  grantType: OAuthGrantType;
  clientId?: string;
  /** Never logged (it is one of the config's secrets). */
  clientSecret?: string;
  scopes?: string[];
  clientName?: string;
  clientMetadataUrl?: string;
  redirectPort?: number;
  /** client_credentials with private_key_jwt. Never logged. */
  privateKeyPem?: string;
  signingAlgorithm?: string;
  /** jwt_bearer: the assertion presented. Never logged. */
  assertion?: string;
  /** jwt_bearer through an enterprise identity provider (ID token → ID-JAG → access token). */
  identityProvider?: IdentityProviderConfig;
}

export type OAuthGrantType = 'authorization_code' | 'client_credentials' | 'jwt_bearer';

export interface IdentityProviderConfig {
  issuer?: string;
  tokenEndpoint?: string;
  clientId: string;
  clientSecret?: string;
  /** Never logged. */
  idToken: string;
}

export type ServerConfig = StdioServerConfig | RemoteServerConfig;

export interface ToolboxConfig {
  name: string;
  description: string;
  disabledTools: string[];
  /** Names or `*` globs of prompts to hide in every server of this toolbox (as for servers); absent: none. */
  disabledPrompts?: string[];
  /** Overrides keyed by canonical names or globs (applied after the servers' own). Absent means none. */
  toolOverrides?: ToolOverrideRule[];
  /** Characters an open_toolbox answer about this toolbox may take, if configured. */
  catalogBudget?: number;
  /** Longest open_toolbox waits for this toolbox's servers still starting (ms), if configured. */
  openWaitMs?: number;
  /** Longest use_tool waits for the server a call needs while it is still starting (ms), if configured. */
  useToolWaitMs?: number;
  /** This toolbox's servers' `toolChanges` unless a server sets its own. */
  toolChanges?: ToolChanges;
  /** Servers in config order. */
  servers: ServerConfig[];
}

export interface WorkbenchConfig {
  /** Absolute path of the file this came from (or a label for in-memory configs). */
  source: string;
  /** Toolboxes in config order. */
  toolboxes: ToolboxConfig[];
  /** Toolsets in file order: the config's, then the project file's. Absent means none. */
  toolsets?: ToolsetConfig[];
  /** The project file in effect, if one was found. */
  project?: ProjectConfig;
  /** Default `catalogBudget` for every toolbox, if configured. */
  catalogBudget?: number;
  /** Default `openWaitMs` for every toolbox, if configured. */
  openWaitMs?: number;
  /** Default `useToolWaitMs` for every toolbox, if configured. */
  useToolWaitMs?: number;
  /** Default `toolChanges` (README "Pinned tool definitions"): "warn" when unset. */
  toolChanges?: ToolChanges;
  /** `search`: the optional semantic ranker (README "Search"); absent: lexical search only. */
  search?: SearchConfig;
  /** Non-fatal findings (deprecations) that the caller should show on stderr. */
  warnings: string[];
  /**
   * Values that output must never show, chosen by what they mean (env entries, headers and flags with secret names,
   * secret headers, URL credentials, values of `${VAR}` with secret names, every `${secret:NAME}` value; see
   * shared/redact), for `createRedactor`.
   * Absent for configs built in memory.
   */
  secrets?: readonly Secret[];
}

/** What a tool that is new, or changed since it was approved, does: flagged and usable, or held until approved. */
export type ToolChanges = 'warn' | 'quarantine';

/** How open_toolbox's query ranks (README "Search"). */
export interface SearchConfig {
  /** The optional semantic ranker; absent when not configured or when its settings cannot be used (see warnings). */
  embeddings?: EmbeddingsConfig;
}

/** An OpenAI-compatible embeddings endpoint, expanded (README "Search", "Semantic ranker"). */
export interface EmbeddingsConfig {
  /** An absolute http(s) URL, with or without the `/v1` suffix. */
  url: string;
  model: string;
  /** Sent as a Bearer token; a secret (in `secrets`), never shown. */
  apiKey?: string;
}
