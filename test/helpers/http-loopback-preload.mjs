/**
 * Preloaded (`node --import`) into HTTP servers the tests start but do not control, such as
 * @modelcontextprotocol/server-everything, which listens on every interface at `PORT`:
 *   - a listen without a host is bound to 127.0.0.1, so test servers are never reachable from the network;
 *   - once listening, `HTTP_TEST_LISTENING <port>` is written to stderr, so PORT=0 (a free port) can be used
 *     without guessing one first.
 */
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if ((typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) && (args.length === 1 || typeof second === 'function')) {
    args = [Number(first), '127.0.0.1', ...args.slice(1)];
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') process.stderr.write(`HTTP_TEST_LISTENING ${address.port}\n`);
  });
  return listen.apply(this, args);
};
