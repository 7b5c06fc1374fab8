import { LOG_LEVEL_META_KEY, type CallToolResult } from '@modelcontextprotocol/server';
import { isWorkbenchError } from '../errors.js';
import type { SessionScope, UseToolOptions } from '../core/scope.js';
import { failureResult } from '../core/tool-entry.js';
import type { Workbench } from '../core/workbench.js';
import type { ClientLink } from './client-link.js';
import { OPEN_TOOLBOX_USAGE, USE_TOOL_USAGE } from './meta-tools.js';
import { parseOpenToolboxArgs } from './open-toolbox-params.js';
import type { MetaToolCall, ToolCallHandlers, UseToolCall } from './tool-call-pipeline.js';
import { refusal, useToolProblem } from './tool-params.js';

/** What the meta-tools of one surface answer with: the workbench's two calls, for one client's scope. */
export interface MetaToolContext {
  workbench: Pick<Workbench, 'useTool' | 'openToolbox'>;
  scope: SessionScope;
  link: ClientLink;
  /** Who the calls come from, for the debug and audit logs, asked at each call (an HTTP session gets its id late). */
  sessionLabel: () => string | undefined;
  principal: string;
}

/** The answers to use_tool and open_toolbox of one surface, in either era. */
export interface MetaToolHandlers extends ToolCallHandlers {
  /** use_tool with parameters already checked ({@link useToolProblem}): the workbench does the rest. */
  checkedUseTool(args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult>;
}

/**
 * The meta-tools' handlers: malformed parameters are refusals (`isError` results naming the usage), a WorkbenchError
 * from open_toolbox becomes a failure result; anything else is thrown. Relayed requests go to the client through
 * `link`.
 */
export function createMetaToolHandlers(context: MetaToolContext): MetaToolHandlers {
  const checkedUseTool = (args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult> => {
    const toolbox = (args.toolbox_name as string).trim();
    const toolName = (args.tool_name as string).trim();
    return context.workbench.useTool(toolbox, toolName, args.arguments as Record<string, unknown> | undefined, useToolOptions(context, call));
  };
  return {
    checkedUseTool,
    useTool: (args, call) => {
      const problem = useToolProblem(args);
      return problem === undefined ? checkedUseTool(args, call) : Promise.resolve(refusal(USE_TOOL_USAGE, problem));
    },
    openToolbox: (args, call) => openToolbox(context, args, call),
    relay: (request, signal, relatedRequestId) => context.link.ask(request, signal, relatedRequestId),
  };
}

/** How the workbench is to make one use_tool call: for this scope and client, with the call's progress and cancellation. */
function useToolOptions(context: MetaToolContext, call: UseToolCall): UseToolOptions {
  const { progressToken } = call;
  const options: UseToolOptions = {
    scope: context.scope,
    cancellation: call.cancellation,
    // A modern call's log level goes on to the server (a modern one sends its messages only when asked this way).
    meta: call.logLevel === undefined ? call.meta : { ...call.meta, [LOG_LEVEL_META_KEY]: call.logLevel },
    call: { session: context.link.session, request: call.request, ...(call.log && { log: call.log }) },
    sessionLabel: context.sessionLabel(),
    principal: context.principal,
    onprogress:
      progressToken === undefined
        ? undefined
        : (progress) => call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }),
  };
  if (call.pass) Object.assign(options, call.pass);
  return options;
}

async function openToolbox(context: MetaToolContext, args: Record<string, unknown>, call: MetaToolCall): Promise<CallToolResult> {
  const request = parseOpenToolboxArgs(args);
  if (typeof request === 'string') return refusal(OPEN_TOOLBOX_USAGE, request);
  const { progressToken } = call;
  const onprogress = (progress: { progress: number; total?: number; message?: string }): void => {
    if (progressToken !== undefined) call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } });
  };
  try {
    const { result, text, isError } = await context.workbench.openToolbox(request, context.scope, {
      onprogress,
      sessionLabel: context.sessionLabel(),
      principal: context.principal,
    });
    return { content: [{ type: 'text', text }], structuredContent: { ...result }, ...(isError ? { isError } : {}) };
  } catch (error) {
    if (isWorkbenchError(error)) return failureResult(error);
    throw error;
  }
}
