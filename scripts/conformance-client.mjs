#!/usr/bin/env node
/**
 * The "client under test" for the conformance suite's client scenarios: the workbench as the client of a downstream
 * MCP server. The suite runs `node scripts/conformance-client.mjs <scenario-server-url>` with the scenario's name in
 * MCP_CONFORMANCE_SCENARIO. This script puts that URL in a workbench config as a Streamable HTTP server, starts the
 * built workbench over stdio, and drives it like a user of the workbench would (open_toolbox, use_tool), so every
 * request the scenario server sees comes from the workbench's own downstream client.
 *
 * Started by `npm run conformance -- --client`; by hand:
 *   MCP_CONFORMANCE_SCENARIO=tools_call node scripts/conformance-client.mjs http://localhost:PORT/mcp
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
/** A stand-in browser for the authorization-code scenarios: follows the authorization redirect to the loopback. */
const browser = fileURLToPath(new URL('../test/fixtures/oauth-browser.mjs', import.meta.url));
/** The Client ID Metadata Document URL the suite's auth scenarios accept (auth/basic-cimd checks it is used). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const TOOLBOX = 'conformance';

/** Arguments that satisfy a tool's inputSchema well enough for the scenario servers: numbers, strings, booleans. */
function sampleArguments(schema) {
  const args = {};
  for (const name of schema?.required ?? []) {
    const type = schema.properties?.[name]?.type;
    args[name] = type === 'number' || type === 'integer' ? 2 : type === 'boolean' ? true : type === 'object' ? {} : type === 'array' ? [] : 'conformance';
  }
  return args;
}

/** What to do with the scenario server's tools, per scenario; by default call each of them once. */
const plans = {
  tools_call: async (tools, useTool) => {
    const add = tools.find((tool) => tool.original_name === 'add_numbers');
    if (add) await useTool(add.name, { a: 2, b: 3 });
  },
  'json-schema-2020-12-preservation': async (tools, useTool) => {
    // Round-trip the rich schema the workbench handed us through the echo tool, so the scenario sees what survived.
    const echo = tools.find((tool) => (tool.inputSchema?.required ?? []).includes('schema'));
    const focal = tools.find((tool) => tool !== echo);
    if (echo && focal) await useTool(echo.name, { schema: focal.inputSchema });
  },
  'http-custom-headers': async (tools, useTool) => {
    // Each tool once with plain values, then once with strings no HTTP field can carry as they are (non-ASCII,
    // surrounding spaces): those headers must travel base64-encoded.
    for (const tool of tools) {
      const args = sampleArguments(tool.inputSchema);
      await useTool(tool.name, args);
      const unsafe = Object.fromEntries(Object.entries(args).map(([key, value]) => [key, typeof value === 'string' ? ' Zürich ' : value]));
      await useTool(tool.name, unsafe);
    }
  },
};

/**
 * The server's `auth` for an `auth/*` scenario, from the credentials the suite gives in MCP_CONFORMANCE_CONTEXT (README
 * "Remote servers behind OAuth"): machine-to-machine grants, enterprise-managed authorization, a pre-registered
 * client, else the browser flow with a Client ID Metadata Document (dynamic registration where it is not supported).
 */
function authFor(context) {
  const c = context ?? {};
  if (scenario === 'auth/client-credentials-jwt') {
    return { grantType: 'client_credentials', clientId: c.client_id, privateKeyPem: c.private_key_pem, signingAlgorithm: c.signing_algorithm };
  }
  if (scenario === 'auth/client-credentials-basic') return { grantType: 'client_credentials', clientId: c.client_id, clientSecret: c.client_secret };
  if (c.idp_id_token) {
    const identityProvider = { issuer: c.idp_issuer, tokenEndpoint: c.idp_token_endpoint, clientId: c.idp_client_id, idToken: c.idp_id_token };
    return { grantType: 'jwt_bearer', clientId: c.client_id, clientSecret: c.client_secret, identityProvider };
  }
  if (c.valid_jwt) return { grantType: 'jwt_bearer', clientId: c.client_id, assertion: c.valid_jwt };
  if (c.client_id && c.client_secret) return { clientId: c.client_id, clientSecret: c.client_secret };
  return { clientMetadataUrl: CLIENT_METADATA_URL };
}

async function main() {
  if (!url || !/^https?:\/\//.test(url)) throw new Error(`expected the scenario server's URL as the last argument, got "${url ?? ''}"`);
  const dir = await mkdtemp(join(tmpdir(), 'wb-conformance-client-'));
  const configPath = join(dir, 'workbench-config.json');
  const auth = scenario.startsWith('auth/') ? { auth: authFor(process.env.MCP_CONFORMANCE_CONTEXT && JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)) } : {};
  // open_toolbox waits for the server (a sign-in takes several round trips; the suite runs every scenario at once, so a
  // connect can take longer than the default 5 s) rather than answering before it is ready.
  const config = { openWaitMs: 25_000, toolboxes: { [TOOLBOX]: { mcpServers: { scenario: { type: 'http', url, ...auth } } } } };
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'serve', '--config', configPath],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'),
      MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache'),
      MCP_WORKBENCH_OAUTH_DIR: join(dir, 'oauth'),
      BROWSER: `"${process.execPath}" "${browser}"`,
    },
    stderr: 'inherit',
    cwd: dir,
  });
  const client = new Client({ name: 'workbench-conformance-driver', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  // A user who accepts whatever the form proposes: the scenario checks that the defaults reach the server intact.
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    const properties = request.params.requestedSchema?.properties ?? {};
    const content = Object.fromEntries(Object.entries(properties).filter(([, field]) => field.default !== undefined).map(([name, field]) => [name, field.default]));
    return { action: 'accept', content };
  });
  try {
    await client.connect(transport);
    const opened = await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: TOOLBOX } });
    const tools = opened.structuredContent?.tools ?? [];
    process.stdout.write(`${scenario}: open_toolbox listed ${tools.map((tool) => tool.original_name).join(', ') || 'no tools'}\n`);
    const useTool = async (name, args) => {
      const result = await client.callTool({ name: 'use_tool', arguments: { toolbox_name: TOOLBOX, tool_name: name, arguments: args } });
      process.stdout.write(`${scenario}: use_tool ${name} -> ${result.isError ? 'error' : 'ok'} ${JSON.stringify(result.content).slice(0, 300)}\n`);
    };
    const plan = plans[scenario] ?? (async (all) => {
      for (const tool of all) await useTool(tool.name, sampleArguments(tool.inputSchema));
    });
    await plan(tools, useTool);
  } finally {
    await client.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`conformance-client (${scenario}): ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
