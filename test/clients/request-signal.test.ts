import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { limitedFetch } from '../../src/clients/limited-fetch.js';
import { requestSignal } from '../../src/clients/request-signal.js';

/**
 * The remote transports' fetch gives each request a signal of its own (src/clients/request-signal.ts): the SDK hands
 * every request the transport's one long-lived signal, and Node's fetch left a listener on it per request until
 * garbage collection (past 1,500 a MaxListenersExceededWarning per call, seen after 1,500 calls to a remote server).
 */
describe('a signal per remote request', () => {
  let server: Server;
  let url: string;
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/hang') return; // never answers: for the abort case
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('leaves one listener on the long-lived signal however many requests went out', async () => {
    const transport = new AbortController();
    const fetch = limitedFetch(1 << 20);
    for (let i = 0; i < 300; i++) {
      const response = await fetch(`${url}/${i % 2 ? 'stream' : 'json'}`, { method: 'POST', body: '{}', signal: transport.signal });
      await response.text();
    }
    // A response nobody reads: still one listener (its link is weak, and goes with it).
    await fetch(`${url}/json`, { method: 'POST', body: '{}', signal: transport.signal });
    assert.equal(getEventListeners(transport.signal, 'abort').length, 1);
  });

  it('still aborts a request in flight when the long-lived signal aborts', async () => {
    const transport = new AbortController();
    const pending = limitedFetch(1 << 20)(`${url}/hang`, { method: 'POST', body: '{}', signal: transport.signal });
    transport.abort(new Error('transport closed'));
    await assert.rejects(pending, /transport closed|aborted/i);
  });

  it('gives an aborted signal for a request started after the long-lived one aborted', () => {
    const transport = new AbortController();
    transport.abort(new Error('closed'));
    const link = requestSignal(transport.signal);
    assert.equal(link.signal.aborted, true);
    link.release();
  });
});
