import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer, textOf, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * A handshake-era server that needs the user in a browser first answers tools/call with the JSON-RPC error -32042
 * (URL elicitation required, data.elicitations; MCP 2026-07-28 has no such error, a modern server asks with an input
 * round instead). The URLs are what the user needs: the model's result names them in its text and
 * carries them in `_meta["mcp-workbench/error"].elicitations`, for clients of both eras (README "Elicitation").
 */
const config = { toolboxes: { web: { mcpServers: { auth: fixtureServer() } } } };
const ELICITATIONS = [
  { mode: 'url', message: 'Sign in to Example', url: 'https://auth.example.test/sign-in?step=1', elicitationId: 'sign-in-1' },
  { mode: 'url', message: 'Allow access to your files', url: 'https://auth.example.test/consent', elicitationId: 'consent-1' },
];
const signIn = { toolbox_name: 'web', tool_name: 'web__auth__throw_jsonrpc', arguments: { code: -32042, message: 'URL elicitation required', data: { elicitations: ELICITATIONS } } };

describe('a URL elicitation asked with the -32042 error reaches the model with its URLs', () => {
  for (const over of ['stdio', 'http'] as const) {
    for (const era of ERAS) {
      test(`over ${over}, a ${era === 'modern' ? 'MCP 2026-07-28' : 'handshake-era'} client`, async () => {
        const wb = await startEra(over, era, config, () => {}, { elicitation: { form: {}, url: {} } });
        try {
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: signIn })) as CallToolResult;
          assert.equal(result.isError, true, JSON.stringify(result));
          const text = textOf(result);
          assert.match(text, /Sign in to Example: https:\/\/auth\.example\.test\/sign-in\?step=1/);
          assert.match(text, /Allow access to your files: https:\/\/auth\.example\.test\/consent/);
          assert.match(text, /once they have finished there, make the same call again/);
          assert.equal(workbenchErrorCode(result), 'URL_ELICITATION_REQUIRED');
          const meta = result._meta?.['mcp-workbench/error'] as { downstreamCode?: number; elicitations?: unknown } | undefined;
          assert.equal(meta?.downstreamCode, -32042);
          assert.deepEqual(meta?.elicitations, ELICITATIONS);
        } finally {
          await wb.close();
        }
      });
    }
  }
});
