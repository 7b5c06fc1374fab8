import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Tool } from '@modelcontextprotocol/client';
import { parseConfig } from '../../src/config/load.js';
import { ToolPins } from '../../src/core/tool-pins.js';
import { createLogger } from '../../src/log.js';
import { fingerprint, recordFirstSight, type PinFile, type PinnedServer, type ValidPins } from '../../src/state/pins.js';
import { NO_CAPABILITIES } from '../../src/state/trust-policy.js';

// Pinned tool definitions (README "Pinned tool definitions"): a tool that is not the approved one is said once in the
// log. When the pins file changes, what was said is forgotten for the servers whose pins changed — any part of them a
// verdict or its line depends on — and kept for the others, so a pins file written again as it was says nothing again.

const READ: Tool = { name: 'read', description: 'Reads a note.', inputSchema: { type: 'object' } };
const WIPE: Tool = { name: 'wipe', description: 'Deletes every note.', inputSchema: { type: 'object' } };
const LIST: Tool = { name: 'list', description: 'Lists notes.', inputSchema: { type: 'object' } };
const KEY = 'notes/s';
const config = parseConfig({ toolboxes: { notes: { mcpServers: { s: { command: 'node', args: ['server.js'] } } } } }, 'test-config.json', {});
const users = { userOf: () => ({ id: 'local' }), capabilitiesKey: () => NO_CAPABILITIES };

/** Pins of notes/s as first seen listing `read` only: `wipe`, listed later, is new since approved. */
function approvedRead(): PinFile {
  const pins: PinFile = { format: 1, servers: {} };
  recordFirstSight(pins, KEY, [READ], NO_CAPABILITIES, new Date('2026-11-01T00:00:00.000Z'));
  return pins;
}

function valid(pins: PinFile): ValidPins {
  return { kind: 'valid', pins: structuredClone(pins), text: JSON.stringify(pins) };
}

/** The pins with notes/s changed by `change` (on a copy). */
function changed(change: (server: PinnedServer) => void): PinFile {
  const pins = approvedRead();
  change(pins.servers[KEY]!);
  return pins;
}

/** Lists notes/s [read, wipe] under `pins`, then under `next` (read again from the file); how often wipe was said. */
function wipeSaid(next: PinFile): number {
  const lines: string[] = [];
  const toolPins = new ToolPins('/nowhere/tool-pins.json', valid(approvedRead()), createLogger({ level: 'warn', write: (line) => lines.push(line) }), false);
  toolPins.observe(config, users, 'notes', 's', [READ, WIPE]);
  toolPins.observe(config, users, 'notes', 's', [READ, WIPE]);
  toolPins.set(valid(next));
  toolPins.observe(config, users, 'notes', 's', [READ, WIPE]);
  return lines.filter((l) => l.includes('"notes__s__wipe": new on server "s"')).length;
}

describe('what was said once of a server, when the pins file changes', () => {
  it('is kept when the file is read again with the same pins', () => {
    assert.equal(wipeSaid(approvedRead()), 1);
  });

  const changes: [string, (server: PinnedServer) => void][] = [
    ['a tool was approved since', (s) => (s.tools.list = { ...s.tools.read!, fingerprint: fingerprint(LIST) })],
    ['a tool is no longer approved', (s) => delete s.tools.read],
    ["a tool's fingerprint changed", (s) => (s.tools.read!.fingerprint = fingerprint(LIST))],
    ["a tool's approval time changed (its lines name it)", (s) => (s.tools.read!.approved = '2026-11-02T00:00:00.000Z')],
    ["a tool's clients (onlyWith) changed", (s) => (s.tools.read!.onlyWith = [NO_CAPABILITIES])],
    ["the server's clients (seenWith) changed", (s) => (s.seenWith = [NO_CAPABILITIES, 'other'])],
    ["the server's clients are no longer recorded (as after `tools approve`)", (s) => delete s.seenWith],
  ];
  for (const [what, change] of changes) {
    it(`is forgotten when ${what}`, () => {
      assert.equal(wipeSaid(changed(change)), 2);
    });
  }

  it('is forgotten when the server is no longer pinned, and kept for a server whose pins did not change', () => {
    const gone: PinFile = { format: 1, servers: {} };
    assert.equal(wipeSaid(gone), 1, 'a server no longer pinned is a first sight again: nothing is new on it');
    const other = approvedRead();
    recordFirstSight(other, 'notes/t', [LIST], NO_CAPABILITIES);
    assert.equal(wipeSaid(other), 1, 'another server recorded: notes/s kept what it said');
  });
});
