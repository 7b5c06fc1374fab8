import type { BudgetedAnswer } from '../catalog/catalog-index.js';
import type { ResolvedToolset } from '../catalog/toolsets.js';
import type { WorkbenchError } from '../errors.js';
import { isWorkbenchError } from '../errors.js';
import type { Discovery, OpenOptions, OpenToolboxRequest } from './open-toolbox.js';
import type { CachedCatalog, Scope } from './scope.js';
import { withConfigHint, withConfigWarning, withStateWarning } from './state-problem.js';
import type { ToolEntry } from './tool-entry.js';
import { openToolset, type ToolsetHost } from './toolset-routes.js';

/** What an `open_toolbox` request is answered from: the workbench's state at the moment of the request. */
export interface OpenHost {
  discovery: Discovery;
  /** The state file's problem while it is broken, and whether a good state read earlier in this run is in force. */
  brokenState(): { problem: WorkbenchError; lastGood: boolean } | undefined;
  /** The config's last edit that was not applied, if any (the previous config keeps serving). */
  configProblem(): WorkbenchError | undefined;
  isToolbox(name: string): boolean;
  toolset(name: string): ResolvedToolset | undefined;
  toolsetHost(scope: Scope): ToolsetHost<ToolEntry>;
  cachedCatalog(scope: Scope, toolbox: string): CachedCatalog;
}

/**
 * `open_toolbox` in a session's scope: refused while the state file is broken with no good state read in this run;
 * otherwise answered, noting a broken state file or a config edit that was not applied (README "Live config reload"),
 * so the model can say why a toolbox is missing or a tool is still disabled.
 */
export async function openRequest(host: OpenHost, request: OpenToolboxRequest, scope: Scope, options: OpenOptions): Promise<BudgetedAnswer> {
  const broken = host.brokenState();
  if (broken && !broken.lastGood) throw broken.problem;
  const edit = host.configProblem();
  const answer = await answerOpen(host, request, scope, options).catch((error: unknown) => {
    throw edit && isWorkbenchError(error, 'TOOLBOX_NOT_FOUND') ? withConfigHint(error, edit) : error;
  });
  const noted = broken ? withStateWarning(answer, broken.problem) : answer;
  return edit ? withConfigWarning(noted, edit) : noted;
}

/** A toolbox, a toolset (its tools across toolboxes, connecting only the servers it needs), or a search of every toolbox. */
async function answerOpen(host: OpenHost, request: OpenToolboxRequest, scope: Scope, options: OpenOptions): Promise<BudgetedAnswer> {
  const name = request.toolbox_name;
  const toolset = name === undefined || host.isToolbox(name) ? undefined : host.toolset(name);
  const { discovery } = host;
  if (toolset && request.query !== undefined) return discovery.searchToolset(request, toolset, discoveryScope(host, scope), options);
  if (!toolset) return discovery.open(request, discoveryScope(host, scope), options);
  const wait = { waitMs: discovery.openWait(toolset.config.name), onprogress: options.onprogress };
  const opened = await openToolset(host.toolsetHost(scope), toolset, wait);
  const toolboxes = [...new Set(toolset.servers.map((s) => s.toolbox))];
  return discovery.answer(
    request,
    { toolbox: toolset.config.name, description: toolset.config.description },
    {
      connected: opened.connected,
      failed: opened.failed,
      pending: opened.pending,
      catalogs: toolboxes.map((t) => host.cachedCatalog(scope, t).catalog),
      entries: opened.tools,
      member: (tool) => toolset.includes(tool),
    },
    discovery.budget(),
  );
}

/** What discovery reads of a session's scope. */
function discoveryScope(host: OpenHost, scope: Scope): Parameters<Discovery['open']>[1] {
  return { manager: scope.manager, liveCatalog: (toolbox) => host.cachedCatalog(scope, toolbox), shown: scope.shown, search: scope.search };
}
