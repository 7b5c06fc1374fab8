import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { DEFAULT_PARAMS, searchIndex, searchTools, stem, words } from '../../src/catalog/search.js';
import { postingsOf } from '../../src/catalog/search-index.js';
import { closestTools } from '../../src/catalog/search-closest.js';
import { buildBridge } from '../../src/catalog/search-bridge.js';
import { parseQuery } from '../../src/catalog/search-query.js';

function tool(name: string, description: string, properties: Record<string, object> = {}, title?: string): FullEntry {
  return {
    name: `t__s__${name}`,
    toolbox_name: 't',
    source_server: 's',
    original_name: name,
    ...(title ? { title } : {}),
    description: `[t/s] ${description}`,
    inputSchema: { type: 'object', properties: properties as FullEntry['inputSchema']['properties'] },
  };
}

describe('search', () => {
  it('splits snake, kebab, camel and dotted names into words', () => {
    assert.deepEqual(words('browser.take_screenshot-nowHTTPServer'), ['browser', 'take', 'screenshot', 'now', 'http', 'server']);
    assert.deepEqual(words('getV2Items API-get-user XMLHttpRequest'), ['get', 'v', '2', 'items', 'api', 'get', 'user', 'xml', 'http', 'request']);
  });

  it('stems plurals and -ing/-ed endings to one form', () => {
    assert.equal(stem('screenshots'), stem('screenshot'));
    assert.equal(stem('creating'), stem('create'));
    assert.equal(stem('created'), stem('creates'));
    assert.equal(stem('entities'), stem('entity'));
    // Porter stems (the stemmer package), beyond plural and -ing/-ed: derivations meet too.
    assert.equal(stem('navigation'), stem('navigate'));
    assert.equal(stem('repositories'), stem('repository'));
  });

  it('does not let a long description win by bulk over a short, exact one', () => {
    const long = `Manages many things. ${'It can also list files, read files, and much more about files in general. '.repeat(8)}`;
    const entries = [tool('workspace_manager', long), tool('list_files', 'List the files of a folder.')];
    assert.equal(searchTools([searchIndex(entries)], 'list files', 5)[0]!.original_name, 'list_files');
  });

  it('matches the last word as a prefix, forgives typos, and puts a quoted or exact name first', () => {
    const entries = [
      tool('take_screenshot', 'Capture the visible page as PNG.'),
      tool('screen_info', 'Size of the screen.'),
      tool('fill_form', 'Type values into form fields.'),
      tool('fill', 'Type into one field of a form.'),
    ];
    const index = searchIndex(entries);
    assert.ok(searchTools([index], 'screensh', 5).some((t) => t.original_name === 'take_screenshot'), 'prefix of the last word');
    assert.equal(searchTools([index], 'fil', 5).length, 2, 'prefix of the last word');
    assert.deepEqual(searchTools([index], 'fil ', 5), [], 'a finished word is not a prefix');
    assert.equal(searchTools([index], 'take screnshot', 5)[0]!.original_name, 'take_screenshot', 'one typo');
    assert.equal(searchTools([index], '"fill_form"', 5)[0]!.original_name, 'fill_form');
    assert.equal(searchTools([index], 'fill', 5)[0]!.original_name, 'fill');
    assert.equal(searchTools([index], 'fill form', 5)[0]!.original_name, 'fill_form');
  });

  it('reads a pasted URL, email address or file name as its kind', () => {
    const read = (query: string): string => parseQuery(query).words.join(' ');
    assert.equal(read('open https://news.ycombinator.com/item?id=1'), 'open url');
    assert.equal(read('go to example.com/login'), 'go to url');
    assert.equal(read('type test@example.com into the email field'), 'type email into the email field');
    assert.equal(read('show me README.md from facebook/react'), 'show me md file from facebook react');
    assert.equal(read('find files named *.ts'), 'find files named ts file');
    assert.equal(read('fix settings.py.'), 'fix py file');
    // Not values: numbers with a point, abbreviations, a library named Name.js, a path without an extension.
    assert.equal(read('what is at 40.7128, -74.0060'), 'what is at 40 7128 74 0060');
    assert.equal(read('e.g. the v1.2 release'), 'e g the v 1 2 release');
    assert.equal(read('Next.js routing docs'), 'next js routing docs');
    assert.equal(read('list src/components'), 'list src components');
    // A #name after a word that says where is a chat channel ("channel" once, even when the query says it).
    assert.equal(read('what did people say in #general'), 'what did people say in channel general');
    assert.equal(read('post it to the #dev-ops.'), 'post it to the channel dev ops');
    assert.equal(read('post in #add-ons'), 'post in channel add ons');
    assert.equal(read('what is new in the #general channel'), 'what is new in the general channel');
    // Not a channel: a number, a hex colour, C#, a URL's fragment, a CSS selector, a tool's name.
    assert.equal(read('close issue #42'), 'close issue 42');
    assert.equal(read('set the colour to #ffcc00'), 'set the colour to ffcc 00');
    assert.equal(read('set the colour to #FFF'), 'set the colour to fff');
    assert.equal(read('a C#sharp compiler'), 'a c sharp compiler');
    assert.equal(read('open localhost:3000/docs#intro'), 'open localhost 3000 docs intro');
    assert.equal(read('click #submit-button'), 'click submit button');
    assert.equal(read('#read_file'), 'read file');
    // Quoted names are still taken as written.
    assert.deepEqual(parseQuery('"read_file"').exactNames.slice(0, 1), ['read_file']);
    const tools = [
      tool('navigate', 'Navigate the browser to a URL', { url: { type: 'string' } }),
      tool('news_search', 'Search the news for recent articles', { query: { type: 'string' } }),
      tool('get_file_contents', 'Get the contents of a file from a repository', { path: { type: 'string' } }),
      tool('search_repositories', 'Search for repositories'),
    ];
    const index = searchIndex(tools);
    assert.equal(searchTools([index], 'open https://news.example.com', 1)[0]?.original_name, 'navigate');
    assert.equal(searchTools([index], 'show me README.md', 1)[0]?.original_name, 'get_file_contents');
    const chat = searchIndex([
      ...tools,
      tool('get_channel_history', 'Get recent messages from a channel', { channel_id: { type: 'string' } }),
      tool('read_file', 'Read a file'),
    ]);
    assert.equal(searchTools([chat], 'what did people say in #general', 1)[0]?.original_name, 'get_channel_history');
    assert.equal(searchTools([chat], '#read_file', 1)[0]?.original_name, 'read_file');
  });

  it('lets a destructive tool whose action the query does not name lose a near tie', () => {
    const drop = { ...tool('drop_database', 'Drops a database.'), annotations: { destructiveHint: true } };
    const list = { ...tool('list_databases', 'Lists all databases on the connected server, with their sizes.'), annotations: { readOnlyHint: true } };
    const index = searchIndex([drop, list]);
    const first = (query: string, params = DEFAULT_PARAMS): string | undefined => searchTools([index], query, 2, { params })[0]?.original_name;
    // Without the rule the shorter description wins; with it, a question that names no action gets the tool that reads.
    assert.equal(first('what databases are there', { ...DEFAULT_PARAMS, destructiveUnnamed: 1 }), 'drop_database');
    assert.equal(first('what databases are there'), 'list_databases');
    // Naming the action keeps the destructive tool first.
    assert.equal(first('drop the database'), 'drop_database');
    // Only an explicit destructiveHint counts: the same tool without annotations is ranked by its words alone.
    const plain = searchIndex([tool('drop_database', 'Drops a database.'), list]);
    assert.equal(searchTools([plain], 'what databases are there', 1)[0]?.original_name, 'drop_database');
  });

  it('narrows with server: and toolbox: qualifiers (names or globs)', () => {
    const a = searchIndex([tool('read_file', 'Read a file.')]);
    const other: FullEntry = { ...tool('read_file', 'Read a file.'), name: 'u__b__read_file', toolbox_name: 'u', source_server: 'b' };
    const b = searchIndex([other]);
    assert.deepEqual(searchTools([a, b], 'server:b read file', 5).map((t) => t.name), ['u__b__read_file']);
    assert.deepEqual(searchTools([a, b], 'read toolbox:t*', 5).map((t) => t.name), ['t__s__read_file']);
    assert.deepEqual(searchTools([a, b], 'server:nothing read', 5), []);
  });

  it('bridges a word to the name words it goes with across servers, learnt from the catalogs', () => {
    const seen = (server: string, name: string, description: string): FullEntry => ({ ...tool(name, description), name: `k__${server}__${name}`, toolbox_name: 'k', source_server: server });
    const known = searchIndex([
      seen('one', 'create_directory', 'Make a new folder.'),
      seen('two', 'make_directory', 'Create a folder on disk.'),
      seen('three', 'new_directory', 'New folder at a path.'),
      seen('one', 'read_file', 'Read a text file.'),
      seen('two', 'get_time', 'Current time.'),
      seen('three', 'send_mail', 'Send an email.'),
      seen('three', 'list_users', 'Users of the workspace.'),
    ]);
    const here = searchIndex([tool('create_directory', 'Creates a path on disk.'), tool('remove_path', 'Deletes a path.')]);
    const bridge = buildBridge([known, here]);
    assert.deepEqual(searchTools([here], 'folder', 5), [], 'no word in common without the bridge');
    assert.equal(searchTools([here], 'folder', 5, { bridge })[0]?.original_name, 'create_directory');
    // Servers count once each, whatever order their tools come in (here interleaved, then grouped, then reversed).
    const grouped = [...known.docs].map((d) => d.entry).sort((a, b) => (a.source_server < b.source_server ? -1 : a.source_server > b.source_server ? 1 : 0));
    for (const order of [grouped, [...grouped].reverse()]) {
      assert.deepEqual(buildBridge([searchIndex(order), here], undefined, null).related, buildBridge([known, here], undefined, null).related);
    }
  });

  it('names the closest tools when nothing matches', () => {
    const index = searchIndex([tool('take_screenshot', 'Capture the page.'), tool('navigate', 'Open a URL.')]);
    assert.equal(closestTools([index], 'screenshoots', 1)[0]!.original_name, 'take_screenshot');
  });

  it('ranks by name parts, title, description and parameters, deterministically', () => {
    const entries = [
      tool('navigate', 'Open a URL in the browser.', { url: { type: 'string', description: 'Address to open' } }),
      tool('takeScreenshot', 'Capture the visible part of the page as PNG.', { fullPage: { type: 'boolean' } }),
      tool('page.pdf', 'Print the page to a PDF file.'),
      tool('fill_form', 'Type values into form fields.', { fields: { type: 'array', description: 'Field selectors and values' } }),
    ];
    const index = searchIndex(entries);
    assert.equal(searchTools([index], 'screenshots of the page', 5)[0]!.original_name, 'takeScreenshot');
    assert.equal(searchTools([index], 'pdf', 5)[0]!.original_name, 'page.pdf');
    assert.equal(searchTools([index], 'open address', 5)[0]!.original_name, 'navigate');
    assert.equal(searchTools([index], 'field selectors', 5)[0]!.original_name, 'fill_form');
    assert.deepEqual(searchTools([index], 'page', 5), searchTools([searchIndex([...entries])], 'page', 5));
    assert.deepEqual(searchTools([index], 'unrelated words', 5), []);
    assert.equal(searchTools([index], 'page', 1).length, 1);
  });

  it('counts a word per field exactly up to 63 times, and builds the same index again from the same texts', () => {
    const entries = [tool('echo', `${'echo '.repeat(70)}back.`), tool('echo_twice', 'Echo back, twice: echo echo.'), tool('other', 'Nothing alike.')];
    const index = searchIndex(entries);
    const postings = postingsOf(index, stem('echo'))!;
    // The description's one sentence has 70 "echo": capped at 63 (BM25 saturated long before); the name's one is kept.
    assert.equal(postings.tf[0]! % 64, 1);
    assert.equal(Math.floor(postings.tf[0]! / 64 ** 2) % 64, 63);
    const again = searchIndex(entries.map((e) => ({ ...e })));
    assert.deepEqual([...again.postings.keys()], [...index.postings.keys()]);
    assert.deepEqual([...again.postings.keys()].map((term) => postingsOf(again, term)), [...index.postings.keys()].map((term) => postingsOf(index, term)));
    assert.deepEqual([...again.vocabulary], [...index.vocabulary]);
  });

  it('keeps each term\'s docs in order with their counts, whatever was built before', () => {
    const entries = [tool('echo', 'Echo back.'), tool('add', 'Add two numbers.'), tool('echo_twice', 'Echo back, twice: echo echo.')];
    const first = searchIndex(entries);
    // A bigger build in between (thousands of rows, new words) must leave nothing behind for the next one.
    const many = Array.from({ length: 400 }, (_, i) => tool(`tool_${i}`, `Word${i} and word${i + 1}, echo ${i}.`));
    const big = searchIndex(many);
    assert.equal(postingsOf(big, stem('echo'))!.docs.length, 400);
    const again = searchIndex(entries.map((e) => ({ ...e })));
    for (const index of [first, again]) {
      assert.deepEqual([...postingsOf(index, stem('echo'))!.docs], [0, 2]);
      assert.deepEqual([...postingsOf(index, stem('add'))!.docs], [1]);
      // echo_twice: "echo" once in its name, three times in its one-sentence description (the summary field).
      const twice = postingsOf(index, stem('echo'))!.tf[1]!;
      assert.deepEqual([twice % 64, Math.floor(twice / 64 ** 2) % 64], [1, 3]);
      for (const term of index.postings.keys()) {
        const p = postingsOf(index, term)!;
        assert.equal(p.docs.length, p.tf.length);
        for (let i = 1; i < p.docs.length; i++) assert.ok(p.docs[i]! > p.docs[i - 1]!);
      }
    }
    assert.deepEqual([...again.postings.keys()], [...first.postings.keys()]);
  });

  it('searches several indexes as one', () => {
    const a = searchIndex([tool('read_graph', 'Read the knowledge graph.')]);
    const b = searchIndex([tool('read_file', 'Read a file.')]);
    assert.deepEqual(searchTools([a, b], 'read file', 5).map((t) => t.original_name), ['read_file', 'read_graph']);
  });
});
