import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { TRANSPORTS, startOver } from '../helpers/both-transports.js';
import { fixtureServer, textOf, waitFor } from '../helpers/workbench-process.js';

// A config edit that does not parse keeps the previous config serving, with a `config_warning` on open_toolbox answers
// (README "Live reload"). The warning names the file, line and column, and never quotes the file: the line at fault
// may hold a secret (a token pasted into an env block), and the model's context is no place for it. The terminal log
// shows the line, with a caret under the fault, to the person who can fix it.

const SECRET = 'sk-live-0123456789abcdef-excerpt';

for (const transport of TRANSPORTS) {
  describe(`a config edit that does not parse (${transport})`, () => {
    it('is reported to the client by line and column without quoting the file; the terminal shows the line', async () => {
      const config = { toolboxes: { dev: { mcpServers: { fx: fixtureServer() } } } };
      const wb = await startOver(transport, config);
      try {
        assert.notEqual((await wb.call('open_toolbox', { toolbox_name: 'dev' })).isError, true);
        const broken = `{\n  "toolboxes": {\n    "dev": { "mcpServers": { "fx": { "command": "node", "env": { "TOKEN": "${SECRET}" } "args": [] } } }\n  }\n}\n`;
        await writeFile(wb.configPath, broken);
        let answer = '';
        assert.ok(
          await waitFor(async () => {
            answer = textOf(await wb.call('open_toolbox', { toolbox_name: 'dev' }));
            return answer.includes('config_warning');
          }, 15_000),
          'the answer says the edit is not applied',
        );
        assert.match(answer, /line 3, column \d+/);
        assert.ok(!answer.includes(SECRET), `the client is never shown the line: ${answer}`);
        assert.ok(await waitFor(async () => wb.stderr().includes(SECRET), 5_000), 'the terminal shows the line at fault');
      } finally {
        await wb.close();
      }
    });
  });
}
