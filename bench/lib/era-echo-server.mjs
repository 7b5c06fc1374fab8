#!/usr/bin/env node
// The floor of the eras bench: a stdio "server" that does no MCP work at all. It answers every request with the bytes
// the workbench sends for the bench's `use_tool` echo in the client's era (a handshake-era reply is the downstream
// result as it came; an MCP 2026-07-28 reply carries `resultType` and the server's identity), so an SDK v2 client of
// either era calling it directly costs what that client costs, and nothing a server does. Handshake-era requests are
// told apart by the absence of the per-request protocol version in `_meta`.
const SERVER_INFO = { name: 'mcp-workbench', title: 'MCP Workbench', version: '0' };
const ECHO = { content: [{ type: 'text', text: 'Echo: x' }] };
const MODERN_ECHO = { ...ECHO, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO } };

function answer(message) {
  if (message.id === undefined || typeof message.method !== 'string') return undefined;
  if (message.method === 'initialize') {
    return { jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: SERVER_INFO } };
  }
  if (message.method === 'server/discover') {
    return { result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO } }, jsonrpc: '2.0', id: message.id };
  }
  const modern = message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] !== undefined;
  if (modern) return { result: MODERN_ECHO, jsonrpc: '2.0', id: message.id };
  return { jsonrpc: '2.0', id: message.id, result: ECHO };
}

let pending = '';
process.stdin.on('data', (chunk) => {
  pending += chunk.toString('utf8');
  let newline;
  while ((newline = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    if (line.trim() === '') continue;
    const reply = answer(JSON.parse(line));
    if (reply) process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
});
