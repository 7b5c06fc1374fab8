import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkbenchError } from '../errors.js';

/** The path the browser is sent back to on the loopback redirect. */
const CALLBACK_PATH = '/callback';

/** The redirect URI for a loopback port (127.0.0.1: never `localhost`, which may resolve elsewhere). */
export function loopbackRedirect(port: number): string {
  return `http://127.0.0.1:${port}${CALLBACK_PATH}`;
}

/** A free port on 127.0.0.1 right now (bound and released): the redirect port of a new registration. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The loopback redirect receiver of one browser sign-in (RFC 8252 §7.3): an HTTP server on 127.0.0.1 that takes one
 * callback on `/callback` whose `state` matches, answers the browser with a short page, and hands the callback's
 * query (code, iss, or error) to {@link wait}. Anything else gets a 404 and is ignored.
 */
export class LoopbackReceiver {
  private settle: { resolve: (params: URLSearchParams) => void; reject: (error: Error) => void } | undefined;
  private readonly result: Promise<URLSearchParams>;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly state: string | undefined,
    label: string,
  ) {
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // A rejection nobody awaits yet (the sign-in was abandoned) must not crash the process.
    this.result.catch(() => {});
    server.on('request', (request, response) => {
      const url = new URL(request.url ?? '/', `http://127.0.0.1:${port}`);
      if (url.pathname !== CALLBACK_PATH || (this.state !== undefined && url.searchParams.get('state') !== this.state)) {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not a sign-in callback of the MCP Workbench.\n');
        return;
      }
      const failed = url.searchParams.get('error');
      const text = failed
        ? `Signing in to ${label} did not succeed (${failed}). You can close this tab; the workbench says what to do next.`
        : `Signed in to ${label}. You can close this tab and go back to your MCP client.`;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page(text));
      this.settle?.resolve(url.searchParams);
    });
  }

  /**
   * Listens on 127.0.0.1:`port` for the callback of the sign-in whose `state` is given.
   * @throws WorkbenchError SIGN_IN_FAILED when the port is taken, naming it and the fix
   */
  static async listen(port: number, state: string | undefined, label: string): Promise<LoopbackReceiver> {
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
    } catch (error) {
      throw new WorkbenchError(
        'SIGN_IN_FAILED',
        `Signing in to ${label} needs the loopback redirect port 127.0.0.1:${port}, which is in use (${(error as Error).message}). Free it, or set another "redirectPort" in the server's "auth" (the client is then registered again).`,
        { cause: error },
      );
    }
    return new LoopbackReceiver(server, (server.address() as AddressInfo).port, state, label);
  }

  /** The callback's query parameters, once the browser comes back. Rejects when {@link close}d first. */
  wait(): Promise<URLSearchParams> {
    return this.result;
  }

  close(): Promise<void> {
    this.settle?.reject(new Error('the sign-in was abandoned'));
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function page(text: string): string {
  const escaped = text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return `<!doctype html><meta charset="utf-8"><title>MCP Workbench</title><p style="font:16px system-ui;margin:3em">${escaped}</p>\n`;
}
