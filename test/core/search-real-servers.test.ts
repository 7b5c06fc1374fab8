import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Answer, FullEntry } from '../../src/catalog/catalog-index.js';
import { ERAS, startEra, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { filesystemServer, fixtureServer, memoryServer, structuredAnswer, tempDir, textOf } from '../helpers/workbench-process.js';

/**
 * Ranking rules of search (README "Search": "Pasted values", "Destructive tools lose near ties", "Meaning", "Weak word
 * matches") through the protocol, against the real memory and filesystem servers from npm (and the fixture server as
 * a chat server), over stdio and HTTP with clients of both eras, beside a server that cannot start (its variable is
 * unset).
 */
const PATHS = (['stdio', 'http'] as const).flatMap((over: Over) => ERAS.map((era: EraName) => ({ over, era })));

for (const { over, era } of PATHS) {
  describe(`search ranking rules on real servers (${over}, ${era} client)`, () => {
    let dir: string;
    let cleanup: () => Promise<void>;
    let wb: EraWorkbench;
    before(async () => {
      ({ dir, cleanup } = await tempDir(`wb-search-real-${over}-${era}-`));
      const config = {
        toolboxes: {
          dev: {
            description: 'Files and memory',
            mcpServers: {
              memory: memoryServer(join(dir, 'memory.jsonl')),
              filesystem: filesystemServer(dir),
              // Broken on purpose: its variable is unset, so it fails alone and never holds the others up.
              broken: { command: process.execPath, args: ['-e', '0', '${SEARCH_TEST_UNSET_VARIABLE}'] },
            },
          },
          chat: {
            description: 'Team chat',
            mcpServers: {
              // The fixture server with two chat-like tools beside its own.
              chat: { ...fixtureServer(), env: { FIXTURE_EXTRA_TOOLS: 'get_channel_history,list_users' } },
            },
          },
        },
      };
      wb = await startEra(over, era, config);
      assert.equal(wb.client.getProtocolEra(), era);
    });
    after(async () => {
      await wb.close();
      await cleanup();
    });

    async function search(query: string, toolbox = 'dev'): Promise<{ names: string[]; answer: Answer }> {
      const result = await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: toolbox, query } });
      assert.notEqual(result.isError, true, textOf(result as never));
      const answer = structuredAnswer<Answer>(result as never, 'tools');
      return { names: answer.tools.map((t) => (t as FullEntry).original_name), answer };
    }

    it('reads a pasted file name as a file, and a destructive tool loses a near tie unless its action is named', async () => {
      // "notes.txt" has no word any tool has; read as a file name it reaches the file tools by their own words.
      const file = await search('notes.txt');
      assert.ok(file.names[0]?.includes('file'), file.names.join(', '));
      assert.doesNotMatch(file.answer.hint ?? '', /has a word of the query|nearest to it in meaning/);
      assert.deepEqual(file.answer.servers_failed.map((f) => f.server), ['broken']);
      // delete_relations is marked destructive by the memory server; create_relations is not.
      const relations = await search('relations');
      assert.equal(relations.names[0], 'create_relations', relations.names.join(', '));
      assert.ok(relations.names.includes('delete_relations'));
      assert.equal((await search('delete relations')).names[0], 'delete_relations');
      // A bare #name is not a channel: it keeps its exact-name match.
      assert.equal((await search('#read_file')).names[0], 'read_file');
    });

    it("puts first a tool of the server the query is about, and lets a tool near in meaning compete, named in the hint", async () => {
      // "open" is a word of memory's open_nodes, but the query is about files; no memory tool has "erase" or "person".
      // test/catalog/search-meaning.test.ts checks, on the same catalogs, that both answer otherwise without these rules.
      const files = await search('open several files at once');
      assert.equal(files.names[0], 'read_multiple_files', files.names.join(', '));
      const erase = await search('erase a person');
      assert.equal(erase.names[0], 'delete_entities', erase.names.join(', '));
      assert.match(erase.answer.hint ?? '', /None of these tools has a word of the query as written/);
      assert.deepEqual(erase.answer.servers_failed.map((f) => f.server), ['broken']);
      // Beside a tool that has the query's words, one that came by meaning alone is named in the hint.
      const sizes = await search('show folder sizes');
      assert.equal(sizes.names[0], 'list_directory_with_sizes', sizes.names.join(', '));
      assert.ok(sizes.names.slice(0, 5).includes('list_directory'), sizes.names.join(', '));
      assert.match(sizes.answer.hint ?? '', /^dev__filesystem__list_directory\b.* no word of the query: (it is|they are) only near it in meaning\.$/);
    });

    it('puts first the tool whose job the query describes, among tools that share its words (closeness in meaning)', async () => {
      // By words alone the first three answer other tools first, and without the floor of "Weak word matches" the last
      // two answer read_multiple_files and search_files first (both checked in test/catalog/search-meaning.test.ts
      // against the same catalogs; the domain word vectors decide here).
      for (const [query, tool] of [
        ['delete a person', 'delete_entities'],
        ['forget a person', 'delete_entities'],
        ['view an image file', 'read_media_file'],
        // No tool has any of these words, so the best match by words (by related words and near spellings) is weak and
        // words count for less beside meaning.
        ['link two people', 'create_relations'],
        ['drop a fact', 'delete_observations'],
      ] as const) {
        const { names, answer } = await search(query);
        assert.equal(names[0], tool, `${query}: ${names.join(', ')}`);
        assert.deepEqual(answer.servers_failed.map((f) => f.server), ['broken']);
      }
      // A word no tool has and the domain vectors do not know: the general-English vectors top the answer up, said so.
      const english = await search('photograph');
      assert.ok(english.names.length > 0, 'topped up by the English vectors');
      assert.match(english.answer.hint ?? '', /No tool here has a word of the query: these are the tools nearest to it in meaning/);
    });

    // Last: opening the chat toolbox adds its catalog to what the vocabulary bridge learns from, which moves some of
    // the answers above (they were checked against the memory and filesystem catalogs alone).
    it('reads a #name after "in" as a chat channel', async () => {
      // No tool has "people", "say" or "general": read as "in channel general", the channel tool matches by its name.
      const chat = await search('what did people say in #general', 'chat');
      assert.equal(chat.names[0], 'get_channel_history', chat.names.join(', '));
      assert.doesNotMatch(chat.answer.hint ?? '', /has a word of the query|nearest to it in meaning/);
    });
  });
}
