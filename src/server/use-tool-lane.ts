import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { Cancellation } from '../clients/cancellation.js';
import type { UseToolHandler } from './create-server.js';
import { USE_TOOL } from './meta-tools.js';
import type { StdioServerLineTransport } from './stdio-server-transport.js';
import type { UpstreamSession } from './workbench.js';

/**
 * The stdio fast lane for `use_tool`: the request goes from the transport straight to the same handler the MCP
 * server uses (parameter checks, name resolution, validation, forwarding), skipping only the SDK's generic request
 * plumbing. Responses, JSON-RPC errors, progress and cancellation follow the protocol exactly as the SDK would:
 * a malformed request gets -32602, a cancelled request gets no response.
 * Every other message (initialize, tools/list, open_toolbox, management tools, task-augmented calls) goes to the
 * MCP server unchanged.
 */
export function attachUseToolLane(transport: StdioServerLineTransport, useTool: UseToolHandler, session: UpstreamSession): void {
  const inFlight = new Map<RequestId, Cancellation>();

  const respond = (message: Record<string, unknown>): void => transport.write(message);

  transport.intercept = (message) => {
    const m = message as { id?: RequestId; method?: string; params?: Record<string, unknown> };
    if (m.method === 'notifications/cancelled') {
      const requestId = (m.params as { requestId?: RequestId } | undefined)?.requestId;
      const cancellation = requestId === undefined ? undefined : inFlight.get(requestId);
      if (!cancellation) return false;
      cancellation.cancel(m.params?.reason ?? 'cancelled by the client');
      return true;
    }
    if (m.method !== 'tools/call' || m.id === undefined || m.params?.name !== USE_TOOL || m.params.task !== undefined) return false;
    const id = m.id;
    const params = m.params;
    const args = params.arguments;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      respond({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `${USE_TOOL}: the tools/call "arguments" must be an object` } });
      return true;
    }
    const meta = params._meta as { progressToken?: string | number } | undefined;
    const cancellation = new Cancellation();
    inFlight.set(id, cancellation);
    let result;
    try {
      result = useTool((args ?? {}) as Record<string, unknown>, {
        cancellation,
        progressToken: meta?.progressToken,
        notify: (notification) => transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage),
        request: (request, signal) => session.request(request, signal),
      });
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => {
        inFlight.delete(id);
        if (!cancellation.cancelled) respond({ jsonrpc: '2.0', id, result: value });
      },
      (error: unknown) => {
        inFlight.delete(id);
        if (cancellation.cancelled) return;
        // The same answer the SDK's request handling gives for a thrown error: its code if it has one, else -32603.
        const code = (error as { code?: unknown } | null)?.code;
        respond({
          jsonrpc: '2.0',
          id,
          error: {
            code: typeof code === 'number' && Number.isSafeInteger(code) ? code : ErrorCode.InternalError,
            message: error instanceof Error ? error.message : String(error),
          },
        });
      },
    );
    return true;
  };
}
