import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { LineWriter } from '../../src/shared/line-writer.js';

/** A real Writable that records each chunk it is handed and completes writes only when told to. */
function recordingStream(highWaterMark: number) {
  const chunks: string[] = [];
  const held: (() => void)[] = [];
  const stream = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      chunks.push(chunk);
      held.push(callback);
    },
  });
  const release = (): void => {
    for (const callback of held.splice(0)) callback();
  };
  return { stream, chunks, release };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LineWriter', () => {
  it('sends the messages of one tick in a single write, one JSON line each, in order', async () => {
    const { stream, chunks, release } = recordingStream(1 << 20);
    const out = new LineWriter(stream);
    out.write({ jsonrpc: '2.0', id: 1, result: {} });
    out.write({ jsonrpc: '2.0', id: 2, result: { text: 'a\nb' } });
    out.write({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } });
    assert.equal(chunks.length, 0, 'nothing leaves before the end of the tick');
    await tick();
    release();
    assert.equal(chunks.length, 1);
    const lines = chunks[0]!.split('\n');
    assert.equal(lines.pop(), '', 'the batch ends with a newline');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l) as { id?: number; method?: string }).map((m) => m.id ?? m.method),
      [1, 2, 'notifications/progress'],
    );
    out.write({ jsonrpc: '2.0', id: 3, result: {} });
    await tick();
    assert.equal(chunks.length, 2, 'a later tick is a new write');
  });

  it('holds senders back while the stream is over its high-water mark, and lets them go on drain', async () => {
    const { stream, release } = recordingStream(16);
    const out = new LineWriter(stream);
    assert.equal(await Promise.race([out.ready().then(() => 'ready'), tick().then(() => 'waiting')]), 'ready');
    out.write({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(100) } });
    await tick();
    let released = 0;
    const waiting = [out.ready(), out.ready()].map((p) => p.then(() => released++));
    await tick();
    assert.equal(released, 0, 'nobody is released before the stream drains');
    assert.equal(stream.listenerCount('drain'), 1, 'one drain listener serves every waiting sender');
    release();
    await Promise.all(waiting);
    assert.equal(released, 2);
    assert.equal(stream.listenerCount('drain'), 0);
    assert.equal(stream.listenerCount('close'), 0);
  });

  it('releases waiting senders when the stream closes instead of draining', async () => {
    const { stream } = recordingStream(16);
    const out = new LineWriter(stream);
    out.write({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(100) } });
    await tick();
    let released = false;
    const waiting = out.ready().then(() => (released = true));
    await tick();
    assert.equal(released, false, 'the sender waits while the stream is full');
    stream.destroy();
    assert.equal(await Promise.race([waiting.then(() => 'released'), new Promise((r) => setTimeout(r, 5_000)).then(() => 'still waiting')]), 'released');
    assert.equal(stream.listenerCount('drain'), 0, 'no listener is left behind');
  });

  it('flush sends what is queued at once, so ending the stream right after loses nothing', async () => {
    const { stream, chunks, release } = recordingStream(1 << 20);
    const out = new LineWriter(stream);
    out.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'wb-1' } });
    out.flush();
    stream.end();
    release();
    await tick();
    assert.equal(chunks.length, 1);
    assert.equal((JSON.parse(chunks[0]!) as { method: string }).method, 'notifications/cancelled');
  });
});
