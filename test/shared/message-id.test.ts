import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ID_SEARCH_BYTES, findMessageId } from '../../src/shared/message-id.js';

/** The first and last ID_SEARCH_BYTES of a message, as a transport keeps them while skipping it. */
const ends = (message: string): [string, string] => [message.slice(0, ID_SEARCH_BYTES), message.slice(-ID_SEARCH_BYTES)];
const big = 'x'.repeat(10_000);

describe('findMessageId', () => {
  it('finds the id last (TypeScript SDK order) and first (Python SDK order)', () => {
    assert.equal(findMessageId(...ends(`{"result":{"content":[{"type":"text","text":"${big}"}]},"jsonrpc":"2.0","id":7}`)), 7);
    assert.equal(findMessageId(...ends(`{"jsonrpc":"2.0","id":"wb-12","result":{"content":[{"type":"text","text":"${big}"}]}}\r`)), 'wb-12');
    assert.equal(findMessageId(...ends(`{"jsonrpc": "2.0", "id" : -3, "method":"tools/call","params":{"x":"${big}"}}`)), -3);
  });

  it('never takes an "id" nested in params or a result, or inside a string', () => {
    assert.equal(findMessageId(...ends(`{"jsonrpc":"2.0","params":{"id":5,"x":"${big}"},"method":"m"}`)), undefined);
    assert.equal(findMessageId(...ends(`{"jsonrpc":"2.0","method":"m","params":{"text":"\\"id\\":9 ${big}","inner":{"id":4}}}`)), undefined);
    assert.equal(findMessageId(...ends(`{"note":"\\"id\\":1","result":{"t":"${big}"},"id":2}`)), 2);
  });

  it('gives up on ids that are not integers or strings', () => {
    assert.equal(findMessageId(...ends(`{"jsonrpc":"2.0","id":1.5,"result":{"t":"${big}"}}`)), undefined);
    assert.equal(findMessageId(...ends(`{"jsonrpc":"2.0","id":null,"result":{"t":"${big}"}}`)), undefined);
  });
});
