import { CLIENT_CAPABILITIES_META_KEY, createMcpHandler, type ClientCapabilities, type McpHttpHandler } from '@modelcontextprotocol/server';
import { capabilitiesKey } from '../clients/capabilities-key.js';
import type { ServerResponse } from 'node:http';
import type { Workbench } from '../core/workbench.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { createSurface, type CreateServerOptions, type UpstreamSurface } from './create-server.js';
import type { HttpMetrics } from './http-metrics.js';
import { offerable, offerToPipeline } from './http-modern-pipeline.js';
import { principalLabel } from './http-security.js';
import type { ModernAnswer } from './tool-call-pipeline.js';

/** Where a request handed over by the pipeline carries its answer to the server instance the SDK makes for it. */
const HANDED_OVER = 'mcp-workbench/handedOver';

/**
 * The MCP 2026-07-28 side of `--http`: no handshake and no session, each POST carries its protocol version, client
 * info and capabilities, and the SDK answers it with a fresh server instance. What must outlive a request — the
 * downstream servers a user's calls reach, and the input rounds of calls waiting on the client — lives in one
 * surface per principal: the bearer token that admitted the request (each `--token` is one principal), or, on a
 * loopback bind without a token, one local principal that every such client shares (README "Protocol eras").
 */
export interface ModernHttp {
  /** Serves one modern request; `principal` names who it is from (a digest, never the token itself). */
  serve(request: Request, body: unknown, principal: string, res: ServerResponse): Promise<void>;
  /** Principals with a surface open. */
  principalCount(): number;
  /** Closes the surfaces idle for `idleMs` with no request in progress and no input round held. */
  sweep(idleMs: number): void;
  close(): Promise<void>;
}

interface Principal {
  surface: UpstreamSurface;
  handler: McpHttpHandler;
  active: number;
  lastSeen: number;
}

export function createModernHttp(workbench: Workbench, version: string, options: CreateServerOptions, log: Logger, metrics?: HttpMetrics): ModernHttp {
  const principals = new Map<string, Principal>();
  const stopFollowing = new Map<string, () => void>();

  /** The surface of one principal's clients that declare the same capabilities (`key`: principal, then capabilities). */
  const principalOf = (key: string): Principal => {
    let entry = principals.get(key);
    if (!entry) {
      const owner = key.slice(0, key.indexOf('\0'));
      const surface = createSurface(workbench, version, { ...options, isolated: true, owner, sessionLabel: () => 'http', principal: principalLabel(owner) });
      // One SDK handler per principal: its listen streams (and their event bus) hear only this principal's changes.
      const handler = createMcpHandler((ctx) => surface.instance('modern', ctx.authInfo?.extra?.[HANDED_OVER] as Promise<ModernAnswer> | undefined), {
        legacy: 'reject',
        onerror: (error) => log.debug(`modern HTTP: ${errorMessage(error)}`),
      });
      entry = { surface, handler, active: 0, lastSeen: Date.now() };
      principals.set(key, entry);
      // Clients listening for list changes (subscriptions/listen) hear of a reload.
      const stopTools = surface.onToolsChanged(() => handler.notify.toolsChanged());
      // Resource and prompt lists change as this principal's toolboxes open; updates of the resources its listen
      // streams name (see the listen request in serve) reach the streams that name them.
      const stopNotices = surface.onNotice((notice) => {
        if (notice.kind === 'resources') handler.notify.resourcesChanged();
        else if (notice.kind === 'prompts') handler.notify.promptsChanged();
        else handler.notify.resourceUpdated(notice.uri);
      });
      stopFollowing.set(key, () => {
        stopTools();
        stopNotices();
      });
      log.info(`modern client ${key.slice(0, 8)} (MCP 2026-07-28) has its own downstream servers (${principals.size} principal(s) × capability sets)`);
    }
    return entry;
  };

  const closePrincipal = async (key: string, why: string): Promise<void> => {
    const entry = principals.get(key);
    if (!entry) return;
    principals.delete(key);
    stopFollowing.get(key)?.();
    stopFollowing.delete(key);
    log.info(`modern client ${key.slice(0, 8)} ${why} (${principals.size} principal(s))`);
    await Promise.allSettled([entry.handler.close(), entry.surface.close().catch((error: unknown) => log.debug(`closing a principal: ${errorMessage(error)}`))]);
  };

  return {
    serve: async (request, body, principal, res) => {
      // Clients of one principal that declare other capabilities get other downstream connections: a server may list
      // other tools for them (README "Serving over HTTP").
      const key = `${principal}\0${capabilitiesKey(declaredCapabilities(body))}`;
      const entry = principalOf(key);
      entry.active++;
      entry.lastSeen = Date.now();
      // A listen stream lasts as long as this response: the resources it names stay subscribed downstream until then.
      const listen = (body as { method?: unknown } | null)?.method === 'subscriptions/listen' ? {} : undefined;
      if (listen) void entry.surface.listens.opened(listen, (body as { params?: unknown }).params);
      const viaSdk = async (answer?: Promise<ModernAnswer>): Promise<void> => {
        const authInfo = { token: principal, clientId: key, scopes: [], ...(answer ? { extra: { [HANDED_OVER]: answer } } : {}) };
        await writeResponse(await entry.handler.fetch(request, { parsedBody: body, authInfo }), res);
      };
      try {
        // use_tool and open_toolbox go through the tool-call pipeline, as on stdio, when the SDK would take them as they are.
        let path = offerable(request, body) ? await offerToPipeline(entry.surface, body, res, viaSdk) : undefined;
        if (path === undefined) {
          await viaSdk();
          path = 'sdk';
        }
        metrics?.modernRequest(path);
      } finally {
        if (listen) void entry.surface.listens.ended(listen);
        entry.active--;
        entry.lastSeen = Date.now();
      }
    },
    principalCount: () => principals.size,
    sweep: (idleMs) => {
      const now = Date.now();
      for (const [key, entry] of principals) {
        if (entry.active === 0 && entry.surface.rounds.size === 0 && now - entry.lastSeen >= idleMs) {
          void closePrincipal(key, `expired after ${Math.round(idleMs / 1000)} s idle`);
        }
      }
    },
    close: async () => {
      await Promise.allSettled([...principals.keys()].map((key) => closePrincipal(key, 'closed (shutting down)')));
    },
  };
}

/** The client capabilities a modern request declares in its `_meta` envelope (none when it declares none). */
function declaredCapabilities(body: unknown): ClientCapabilities | undefined {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const declared = meta?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof declared === 'object' && declared !== null ? (declared as ClientCapabilities) : undefined;
}

/** Writes a web Response to a Node response, streaming its body (SSE) until either side ends. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const onClose = (): void => void reader.cancel().catch(() => {});
  res.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}
