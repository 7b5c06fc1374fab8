import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { argSecrets, createRedactor, envSecrets, headerSecrets, namesSecret, redactUrl } from '../../src/shared/redact.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { runCliAsync as run } from '../helpers/cli-run.js';
import { node, startWorkbench, tempDir, workbenchErrorCode } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

/**
 * Secrets planted in the config through ${VAR} and written literally (in a URL, in a server's env): none may ever be
 * printed. WB_HARMLESS names nothing secret: its value is shown as expanded (README "Secrets").
 */
const SECRET_ENV = {
  WB_PASS: 'pa55-Word-XYZ',
  WB_TOKEN: 'tok-ABCDEF-123',
  WB_KEY: 'key-QWERTY-789',
  WB_BEARER: 'bearer-ZXCV-456',
  WB_STDIO: 'stdio-secret-987',
};
const HARMLESS = '/tmp/wb-harmless-dir';
const ENV = { ...SECRET_ENV, WB_HARMLESS: HARMLESS };
const LITERAL_SIG = 'plainsig123';
const LITERAL_TOKEN = 'tok-LITERAL-4242';
const SECRETS = [...Object.values(SECRET_ENV), LITERAL_SIG, LITERAL_TOKEN, encodeURIComponent(ENV.WB_PASS)];

function assertNoSecret(channel: string, text: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${channel} shows the secret ${secret}:\n${text}`);
}

/** The harmless value a server was started with is shown as expanded, never as a marker. */
function assertShowsHarmless(channel: string, text: string): void {
  assert.ok(text.includes(`${HARMLESS}/x`), `${channel} shows the expanded WORK_DIR:\n${text}`);
  assert.ok(!text.includes('[redacted: ${WB_HARMLESS}]'), `${channel} hides a value that is no secret:\n${text}`);
}

describe('secrets are never printed or returned', () => {
  let echo: Server;
  let config: unknown;
  let dir: string;
  let configPath: string;
  let cleanup: () => Promise<void>;

  before(async () => {
    // Answers every request with 500 and a body that repeats the URL and the Authorization header, as careless
    // servers and proxies do: the workbench must not pass that on.
    echo = createServer((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`cannot serve ${req.url} for ${req.headers.authorization ?? 'nobody'}`);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const port = (echo.address() as AddressInfo).port;
    config = {
      toolboxes: {
        tb: {
          mcpServers: {
            userinfo: { type: 'http', url: `http://wbuser:\${WB_PASS}@127.0.0.1:${port}/mcp?token=\${WB_TOKEN}&sig=${LITERAL_SIG}` },
            echoing: {
              type: 'http',
              url: `http://127.0.0.1:${port}/mcp?api_key=\${WB_KEY}`,
              headers: { Authorization: 'Bearer ${WB_BEARER}' },
            },
            // A child that prints its environment to stderr and dies: the stderr tail is part of the error. SECRET_X
            // and API_TOKEN name secrets (one from a variable, one written literally); WORK_DIR does not.
            stdio: {
              command: node,
              args: [
                '-e',
                "console.error('my secret is', process.env.SECRET_X, 'my token is', process.env.API_TOKEN, 'my dir is', process.env.WORK_DIR); process.exit(3)",
              ],
              env: { SECRET_X: '${WB_STDIO}', API_TOKEN: LITERAL_TOKEN, WORK_DIR: '${WB_HARMLESS}/x' },
            },
          },
        },
      },
    };
    ({ dir, cleanup } = await tempDir());
    configPath = join(dir, 'workbench-config.json');
    await writeFile(configPath, JSON.stringify(config));
  });

  after(async () => {
    await new Promise((resolve) => echo.close(resolve));
    await cleanup();
  });

  const checkResults = (channel: string, opened: CallToolResult, used: CallToolResult[]): void => {
    assert.equal(opened.isError, true, 'a toolbox with no working server answers isError, listing each reason');
    const structured = opened.structuredContent as { servers_failed: { server: string; error: string }[] };
    assert.deepEqual(structured.servers_failed.map((f) => f.server).sort(), ['echoing', 'stdio', 'userinfo']);
    assertNoSecret(`${channel} open_toolbox structuredContent`, JSON.stringify(opened.structuredContent));
    assertNoSecret(`${channel} open_toolbox text`, JSON.stringify(opened.content));
    assert.match(JSON.stringify(opened.structuredContent), /\[redacted: /, 'the failure says what was hidden');
    assert.match(JSON.stringify(opened.structuredContent), /my token is \[redacted: env API_TOKEN\]/);
    // Redaction keeps the structured failure (its stderr tail redacted too): what happened stays readable as fields.
    const failures = opened.structuredContent as { servers_failed: { server: string; failure?: { kind: string; exitCode?: number; stderrTail?: string[] } }[] };
    const crashed = failures.servers_failed.find((f) => f.server === 'stdio')?.failure;
    assert.equal(crashed?.kind, 'exited', JSON.stringify(crashed));
    assert.equal(crashed?.exitCode, 3);
    assert.ok(crashed?.stderrTail?.some((line) => line.includes('my token is [redacted: env API_TOKEN]')), JSON.stringify(crashed));
    assertShowsHarmless(`${channel} open_toolbox`, JSON.stringify(opened.structuredContent));
    for (const result of used) {
      assert.equal(workbenchErrorCode(result), 'CONNECT_FAILED');
      assertNoSecret(`${channel} use_tool result`, JSON.stringify(result));
    }
  };

  it('over stdio: open_toolbox, use_tool and stderr', async () => {
    const running = await startWorkbench(config, { env: ENV });
    try {
      const opened = await running.call('open_toolbox', { toolbox_name: 'tb' });
      const used = await Promise.all(['userinfo', 'echoing', 'stdio'].map((server) => running.useTool('tb', `tb__${server}__anything`)));
      checkResults('stdio', opened, used);
      assertNoSecret('stderr', running.stderr());
      const failures = logLines(running.stderr()).filter((l) => (l.level === 'warn' || l.level === 'error') && l.scope?.startsWith('tb/'));
      assert.ok(failures.length > 0, `the failures were logged:\n${running.stderr()}`);
      assertShowsHarmless('stderr', running.stderr());
    } finally {
      await running.close();
    }
  });

  it('over HTTP: open_toolbox, use_tool and stderr', async () => {
    const token = 'http-token-for-the-redaction-test';
    const wb = await startHttpWorkbench(config, ['--http', '127.0.0.1:0'], { ...ENV, WORKBENCH_TOKEN: token });
    try {
      const session = await wb.connect({ authorization: `Bearer ${token}` });
      try {
        const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
        const opened = await call('open_toolbox', { toolbox_name: 'tb' });
        const used = await Promise.all(
          ['userinfo', 'echoing', 'stdio'].map((server) => call('use_tool', { toolbox_name: 'tb', tool_name: `tb__${server}__anything` })),
        );
        checkResults('http', opened, used);
      } finally {
        await session.close();
      }
    } finally {
      await wb.stop();
    }
    assertNoSecret('stderr (http)', wb.stderr());
    assertNoSecret('stdout (http)', wb.stdout());
  });

  it('doctor (text and --json), tools list (text and --json) and validate (text and --json)', async () => {
    const env = { ...ENV, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json') };
    const runs: [string, string[]][] = [
      ['doctor', ['doctor', '--config', configPath, '--timeout', '10000']],
      ['doctor --json', ['doctor', '--config', configPath, '--timeout', '10000', '--json']],
      ['tools list', ['tools', 'list', '--config', configPath]],
      ['tools list --json', ['tools', 'list', '--config', configPath, '--json']],
      ['validate', ['validate', '--config', configPath]],
      ['validate --json', ['validate', '--config', configPath, '--json']],
    ];
    const results = await Promise.all(runs.map(([, args]) => run(args, env)));
    runs.forEach(([label], i) => {
      const { stdout, stderr } = results[i]!;
      assertNoSecret(`${label} stdout`, stdout);
      assertNoSecret(`${label} stderr`, stderr);
    });
    const [doctor, doctorJson, list, listJson, validate, validateJson] = results;
    assert.equal(doctor!.code, 1);
    assert.match(doctor!.stdout, /\[redacted: /);
    assertShowsHarmless('doctor', doctor!.stdout);
    assertShowsHarmless('tools list', list!.stdout);
    const report = JSON.parse(doctorJson!.stdout) as { summary: { failed: number } };
    assert.equal(report.summary.failed, 3);
    assert.match(list!.stdout, /tb\/userinfo/);
    assert.equal((JSON.parse(listJson!.stdout) as { servers_failed: unknown[] }).servers_failed.length, 3);
    // validate warns about credentials in a URL and says to use headers with ${VAR}.
    assert.equal(validate!.code, 0);
    assert.equal(validateJson!.code, 0);
    const { warnings } = JSON.parse(validateJson!.stdout) as { warnings: string[] };
    assert.ok(warnings.some((w) => /^toolboxes\.tb\.mcpServers\.userinfo\.url: .*credentials.*"headers".*\$\{/.test(w)), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => /^toolboxes\.tb\.mcpServers\.echoing\.url: .*"api_key"/.test(w)), JSON.stringify(warnings));
  });
});

describe('the redaction rule', () => {
  it('knows a secret by the parts of its name, not by substrings', () => {
    for (const name of ['API_TOKEN', 'GITHUB_TOKEN', 'x-api-key', 'X-API-KEY', 'apiKey', 'APIKey', 'APIKEY', 'dbPassword', 'DB_PASSWD', 'PGPASSWORD', 'SESSION_ID', 'sessionid', 'AUTH', 'OAUTH_CLIENT_SECRET', 'PRIVATE_KEY', 'Cookie', 'AWS_SECRET_ACCESS_KEY', 'credentials', 'accessToken', 'passphrase']) {
      assert.equal(namesSecret(name), true, name);
    }
    for (const name of ['HOME', 'WORK_DIR', 'MONKEY', 'KEYBOARD_LAYOUT', 'AUTHOR', 'MEMORY_FILE_PATH', 'Content-Type', 'X-Org', 'PATH', 'TOKENIZER_MODEL']) {
      assert.equal(namesSecret(name), false, name);
    }
  });

  it('picks values by meaning: env entries, --flag=value, secret headers', () => {
    assert.deepEqual(envSecrets({ API_TOKEN: 'tok-1', WORK_DIR: '/home/u/x', EMPTY_KEY: '' }), [{ value: 'tok-1', label: 'env API_TOKEN' }]);
    assert.deepEqual(argSecrets(['--api-key=k-123', '--dir=/x', '--token', 'next']), [{ value: 'k-123', label: '--api-key' }], 'a short word after --token is not taken');
    // The value after a lone flag that names a secret (context7's README writes `--api-key`, `YOUR_API_KEY`), unless
    // it is short, a flag or a path, or the flag names where the secret is.
    assert.deepEqual(argSecrets(['--api-key', 'ctx7sk-abc123', '--token-file', 'secret/tok.txt', '--password', '/run/pw', '--secret', '--verbose']), [
      { value: 'ctx7sk-abc123', label: '--api-key' },
    ]);
    assert.deepEqual(headerSecrets('Authorization', 'Bearer abc'), [
      { value: 'Bearer abc', label: 'header Authorization' },
      { value: 'abc', label: 'header Authorization' },
    ]);
    assert.equal(headerSecrets('Proxy-Authorization', 'Basic x').length, 2);
    assert.equal(headerSecrets('Cookie', 'sid=1').length, 1);
    assert.equal(headerSecrets('X-Api-Key', 'k').length, 1);
    assert.deepEqual(headerSecrets('Accept', 'application/json'), []);
  });

  it('does not hunt for trivial values in text even under a secret name', () => {
    const redact = createRedactor([...envSecrets({ SESSION_PERSIST: 'true', AUTH_PORT: '8080', API_TOKEN: 'tok-abcdef' })]);
    assert.equal(redact('persist true on 8080 with tok-abcdef'), 'persist true on 8080 with [redacted: env API_TOKEN]');
  });

  it('hides URL user info and secret-looking query parameters, keeping the rest of the URL', () => {
    assert.equal(
      redactUrl('https://u:p@host.example:8443/mcp?x=1&access_token=abc&Signature=def#frag'),
      'https://[redacted: user info]@host.example:8443/mcp?x=1&access_token=[redacted: access_token]&Signature=[redacted: Signature]#frag',
    );
    assert.equal(redactUrl('https://host.example/mcp'), 'https://host.example/mcp');
  });

  it('hides known values (longest first), URLs inside text, and bearer credentials', () => {
    const redact = createRedactor([
      { value: 'abcd', label: '${SHORT}' },
      { value: 'abcdefgh', label: '${LONG}' },
      { value: 'xyz', label: '${TOO_SHORT_TO_SEARCH}' },
    ]);
    assert.equal(redact('v=abcdefgh w=abcd'), 'v=[redacted: ${LONG}] w=[redacted: ${SHORT}]');
    assert.equal(redact('xyz stays'), 'xyz stays');
    assert.equal(redact('fetch http://a:b@h/p?key=k failed'), 'fetch http://[redacted: user info]@h/p?key=[redacted: key] failed');
    assert.equal(redact('sent Authorization: Bearer eyJhbGciOi.J9x'), 'sent Authorization: Bearer [redacted: credential]');
  });

  it('never redacts a marker again: a secret that is a word of a label stays outside it, and redacting twice changes nothing', () => {
    const redact = createRedactor([
      { value: 'user', label: 'user name' },
      { value: 'name', label: 'env NAME_TOKEN' },
    ]);
    const once = redact('failed: http://user:pw@127.0.0.1/mcp (user name)');
    assert.equal(once, 'failed: http://[redacted: user info]@127.0.0.1/mcp ([redacted: user name] [redacted: env NAME_TOKEN])');
    assert.equal(redact(redact(once)), once);
    const oauth = redact('{"access_token": "abcdefgh", "x": "Bearer eyJhbGciOi.J9x"}');
    assert.equal(redact(oauth), oauth);
  });

  it('shows ${VAR} and ${secret:NAME} references whole: in a query parameter, as user info', () => {
    const redact = createRedactor();
    const text = '"url": "https://mcp.context7.com/mcp?apiKey=${CONTEXT7_APIKEY}&format=json" and http://${U}:${secret:t.r.url.password}@h/x';
    assert.equal(redact(text), text);
    assert.equal(redact('http://${U}:literal@h/x?token=${T}x'), 'http://[redacted: user info]@h/x?token=[redacted: token]');
  });

  it('takes a plain word after Bearer/Basic/Token for a word, not a credential', () => {
    const redact = createRedactor();
    for (const text of ['a 401 with a Bearer challenge', 'Basic authentication failed', 'Token Expired']) assert.equal(redact(text), text);
    assert.equal(redact('Bearer abcdefghijklmnopq, Basic dXNlcjpwYXNz, Token Abc12345'), 'Bearer [redacted: credential], Basic [redacted: credential], Token [redacted: credential]');
  });
});
