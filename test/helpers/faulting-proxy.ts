import { once } from 'node:events';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy in front of a healthy remote MCP server, on 127.0.0.1, that can be told to fail the calls
 * (`tools/call` POSTs) it forwards, the way a server or the gateway in front of it fails during a long day: answer
 * them with an HTTP status (a 503 from a load balancer, a 401 once a token is revoked), with an HTML page, close their
 * connection unanswered, or stop listening altogether and come back on the same port (a restart). Everything else
 * (the handshake, the tool list) passes unless the proxy is stopped.
 */
export interface FaultingProxy {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  /**
   * How calls are answered from now on: passed on, answered with this status (and body) or an HTML page, or their
   * connection is closed before any answer (`cut`).
   */
  failCalls(how: CallFault): void;
  /** Stops listening (connections refused) until start(). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
  /**
   * How many requests the proxy passed on to the server that carried this JSON-RPC method (e.g. "initialize"), or,
   * for an HTTP method in capitals ("DELETE"), how many requests of that method.
   */
  forwarded(method: string): number;
}

export type CallFault = 'pass' | 'html' | 'cut' | { status: number; body?: string };

export async function startFaultingProxy(targetUrl: string): Promise<FaultingProxy> {
  const target = new URL(targetUrl);
  let how: CallFault = 'pass';
  const counts = new Map<string, number>();
  const count = (key: string): void => {
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const answer = (res: ServerResponse): void => {
    if (how === 'cut') {
      res.socket?.destroy();
    } else if (how === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body>Please sign in</body></html>');
    } else if (how !== 'pass') {
      res.writeHead(how.status, { 'content-type': 'text/plain' });
      res.end(how.body ?? '');
    }
  };
  const serve = (): Server =>
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (how !== 'pass' && body.toString('utf8').includes('"tools/call"')) return answer(res);
        count(req.method ?? '');
        const method = /"method"\s*:\s*"([^"]+)"/.exec(body.toString('utf8'))?.[1];
        if (method !== undefined) count(method);
        const headers = { ...req.headers, host: target.host };
        const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (upstreamRes) => {
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          upstreamRes.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      });
    });
  let server = serve();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const stop = async (): Promise<void> => {
    if (!server.listening) return;
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    failCalls: (next) => {
      how = next;
    },
    stop,
    start: async () => {
      server = serve();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    close: stop,
    forwarded: (method) => counts.get(method) ?? 0,
  };
}
