import assert from 'node:assert/strict';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dirPerTest, runCliAsync } from '../helpers/cli-run.js';

/**
 * `migrate --from` and the one redaction rule (README "Secrets", MIGRATION.md "From other clients' configs"): a
 * credential written literally in an imported entry's env, headers or URL is not copied but becomes a reference, and
 * nothing migrate prints — the diff, the notes, `--json` — shows one, from the import or from the config it edits.
 */

const own = dirPerTest('wb-migrate-secrets-');

const env = (): Record<string, string> => ({
  HOME: join(own.dir, 'home'),
  MCP_WORKBENCH_CACHE_DIR: join(own.dir, 'cache'),
  WORKBENCH_STATE_FILE: join(own.dir, 'state.json'),
  MCP_WORKBENCH_SECRET_STORE: 'file',
  MCP_WORKBENCH_SECRETS_FILE: join(own.dir, 'secrets.json'),
});
const run = (args: string[], extra: Record<string, string> = {}) => runCliAsync(args, { ...env(), ...extra }, { cwd: own.dir });

/** Literal credentials under names the rule knows but the old migrate-only patterns did not. */
const VALUES = ['PWDVAL12345', 'sk_live_STRIPEVAL', 'SESSIONVAL123', 'URLPASSWORD', 'URLUSERNAME', 'QUERYTOKEN123', 'APIKEYVAL77', 'HDRVAL999', 'ARGKEYJOINED1', 'ctx7sk-ARGKEYALONE', 'ctx7sk-QUERYKEY1'];
const source = {
  mcpServers: {
    db: { command: 'node', env: { DB_PWD: 'PWDVAL12345', STRIPE_KEY: 'sk_live_STRIPEVAL', SESSION_ID: 'SESSIONVAL123', DEBUG: 'true' } },
    c7: { command: 'npx', args: ['-y', '@upstash/context7-mcp', '--api-key', 'ctx7sk-ARGKEYALONE', '--token-file', 'tokens/t.txt'] },
    ex: { command: 'npx', args: ['-y', 'exa-mcp', '--exa-api-key=ARGKEYJOINED1', '--verbose'] },
    r: { url: 'https://URLUSERNAME:URLPASSWORD@h.example/mcp?access_token=QUERYTOKEN123&api_key=APIKEYVAL77&x=1', headers: { 'X-Session': 'HDRVAL999' } },
    q: { url: 'https://mcp.context7.com/mcp?apiKey=ctx7sk-QUERYKEY1&format=json' },
  },
};

function assertNoCredential(text: string, what: string): void {
  for (const value of VALUES) assert.ok(!text.includes(value), `${what} shows ${value}:\n${text}`);
}

describe('migrate --from: literal credentials', () => {
  it('are neither printed (text, --json) nor copied: env, headers, URL parts and arguments become ${VAR} references', async () => {
    await writeFile(join(own.dir, 'src.json'), JSON.stringify(source));
    const config = join(own.dir, 'new.json');
    const base = ['migrate', '--from', 'claude-code', join(own.dir, 'src.json'), '--toolbox', 't', '--config', config];
    const shown = await run(base);
    assert.equal(shown.code, 0, shown.stderr);
    assertNoCredential(shown.stdout + shown.stderr, 'the diff');
    // A ${VAR} reference is not a credential: the diff shows the new URLs whole.
    assert.ok(shown.stdout.includes('"url": "https://${R_URL_USER}:${R_URL_PASSWORD}@h.example/mcp?access_token=${R_ACCESS_TOKEN}&api_key=${R_API_KEY}&x=1"'), shown.stdout);
    assert.ok(shown.stdout.includes('"url": "https://mcp.context7.com/mcp?apiKey=${Q_APIKEY}&format=json"'), shown.stdout);
    const json = await run([...base, '--json']);
    assert.equal(json.code, 0, json.stderr);
    assertNoCredential(json.stdout + json.stderr, '--json');
    const written = await run([...base, '--write']);
    assert.equal(written.code, 0, written.stderr);
    assertNoCredential(written.stdout + written.stderr, '--write');
    const text = await readFile(config, 'utf8');
    assertNoCredential(text, 'the config');
    const saved = JSON.parse(text) as { toolboxes: { t: { mcpServers: Record<string, { env?: object; url?: string; headers?: object; args?: string[] }> } } };
    const { db, r, c7, ex } = saved.toolboxes.t.mcpServers;
    assert.deepEqual(c7!.args, ['-y', '@upstash/context7-mcp', '--api-key', '${C7_API_KEY}', '--token-file', 'tokens/t.txt'], 'a path after --token-file is no credential');
    assert.deepEqual(ex!.args, ['-y', 'exa-mcp', '--exa-api-key=${EX_EXA_API_KEY}', '--verbose']);
    assert.deepEqual(db!.env, { DB_PWD: '${DB_PWD}', STRIPE_KEY: '${STRIPE_KEY}', SESSION_ID: '${SESSION_ID}', DEBUG: 'true' });
    assert.equal(r!.url, 'https://${R_URL_USER}:${R_URL_PASSWORD}@h.example/mcp?access_token=${R_ACCESS_TOKEN}&api_key=${R_API_KEY}&x=1');
    assert.deepEqual(r!.headers, { 'X-Session': '${R_X_SESSION}' });
    for (const name of ['DB_PWD', 'STRIPE_KEY', 'SESSION_ID', 'R_URL_USER', 'R_URL_PASSWORD', 'R_ACCESS_TOKEN', 'R_API_KEY', 'R_X_SESSION', 'C7_API_KEY', 'EX_EXA_API_KEY']) {
      assert.match(written.stdout, new RegExp(`^ {2}- ${name} \\(not set in this shell\\)`, 'm'), `lists ${name} to set`);
    }
    const vars = { DB_PWD: 'a', STRIPE_KEY: 'b', SESSION_ID: 'c', R_URL_USER: 'u', R_URL_PASSWORD: 'p', R_ACCESS_TOKEN: 't', R_API_KEY: 'k', R_X_SESSION: 's', C7_API_KEY: 'c7', EX_EXA_API_KEY: 'e', Q_APIKEY: 'q' };
    const validated = await run(['validate', '--config', config], vars);
    assert.equal(validated.code, 0, validated.stderr);
  });

  it('with --secrets store, URL parts go to the secret store like env entries and headers', async () => {
    await writeFile(join(own.dir, 'src.json'), JSON.stringify(source));
    const config = join(own.dir, 'stored.json');
    const stored = await run(['migrate', '--from', 'claude-code', join(own.dir, 'src.json'), '--toolbox', 't', '--config', config, '--secrets', 'store', '--write']);
    assert.equal(stored.code, 0, stored.stderr);
    assertNoCredential(stored.stdout + stored.stderr, 'the output');
    const text = await readFile(config, 'utf8');
    assertNoCredential(text, 'the config');
    assert.ok(text.includes('"https://${secret:t.r.url.user}:${secret:t.r.url.password}@h.example/mcp?access_token=${secret:t.r.url.access_token}&api_key=${secret:t.r.url.api_key}&x=1"'), text);
    const secrets = JSON.parse(await readFile(join(own.dir, 'secrets.json'), 'utf8')) as { secrets: Record<string, string> };
    assert.equal(secrets.secrets['t.r.url.password'], 'URLPASSWORD');
    assert.equal(secrets.secrets['t.db.SESSION_ID'], 'SESSIONVAL123');
    assert.equal(secrets.secrets['t.c7.api-key'], 'ctx7sk-ARGKEYALONE');
    assert.ok(text.includes('"--api-key", "${secret:t.c7.api-key}"') || text.includes('"${secret:t.c7.api-key}"'), text);
  });

  it('with --secrets store into a read-only config: refused before any secret is stored', async () => {
    await writeFile(join(own.dir, 'src.json'), JSON.stringify(source));
    const config = join(own.dir, 'locked.json');
    await writeFile(config, '{ "toolboxes": {} }\n');
    await chmod(config, 0o444);
    const refused = await run(['migrate', '--from', 'claude-code', join(own.dir, 'src.json'), '--toolbox', 't', '--config', config, '--secrets', 'store', '--write']);
    await chmod(config, 0o644);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /it is read-only \(mode 0444\)\. Nothing was stored in the secret store either/);
    assert.equal(await readFile(join(own.dir, 'secrets.json'), 'utf8').catch(() => 'none'), 'none', 'no secret stored');
    assert.equal(await readFile(config, 'utf8'), '{ "toolboxes": {} }\n');
  });

  it('--merge: the credentials of the config it edits are hidden in the diff\'s context lines too', async () => {
    const existing = `{
  "toolboxes": {
    "t": { "mcpServers": {
      "old": { "type": "http", "url": "https://bob:URLPASSWORD@old.example/mcp?api_key=APIKEYVAL77" },
      "short": { "command": "x", "env": { "DB_PWD": "abc" } }
    } }
  }
}
`;
    const config = join(own.dir, 'wb.json');
    await writeFile(config, existing);
    await writeFile(join(own.dir, 'src.json'), JSON.stringify({ mcpServers: { n: { command: 'node' } } }));
    for (const json of [[], ['--json']]) {
      const merged = await run(['migrate', '--from', 'claude-code', join(own.dir, 'src.json'), '--toolbox', 't', '--config', config, '--merge', ...json]);
      assert.equal(merged.code, 0, merged.stderr);
      assertNoCredential(merged.stdout, `--merge ${json.join('')}`);
      assert.ok(!merged.stdout.includes('"abc"'), merged.stdout);
      assert.match(merged.stdout, /old\.example\/mcp/, 'the rest of the line is shown');
    }
  });
});

describe('migrate --from: a URL user name that is a plain word', () => {
  it('is hidden inside URLs only: the notes, server names, hosts and commands that share the word are shown as written', async () => {
    const cursor = {
      mcpServers: {
        deploy: { url: 'https://deploy:s3cretpass@deploy.example.com/mcp' },
        'deploy.bot': { command: 'node', args: ['deploy.js', '--dsn', 'postgres://deploy:hunter22x@db.internal:5432/app'] },
        git: { url: 'https://ghp_TOKENUSER1234567890@git.example.com/mcp' },
      },
    };
    await writeFile(join(own.dir, 'cursor.json'), JSON.stringify(cursor));
    const result = await run(['migrate', '--from', 'cursor', join(own.dir, 'cursor.json'), '--toolbox', 'ops', '--config', join(own.dir, 'ops.json'), '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { notes: string[]; changes: { message: string }[]; diff: string };
    const notes = report.notes.join('\n');
    assert.match(notes, /server "deploy": url password held a literal credential/);
    assert.match(notes, /server "deploy\.bot" is imported as "deploy-bot"/);
    assert.match(report.changes.map((c) => c.message).join('\n'), /from Cursor: deploy, deploy-bot, git$/m);
    assert.ok(report.diff.includes('"url": "https://${DEPLOY_URL_USER}:${DEPLOY_URL_PASSWORD}@deploy.example.com/mcp"'), report.diff);
    assert.ok(report.diff.includes('"deploy.js"'), report.diff);
    // A URL's user info is still hidden where it sits, and a password or a token-like user name everywhere.
    assert.ok(report.diff.includes('"postgres://[redacted: user info]@db.internal:5432/app"'), report.diff);
    assert.doesNotMatch(result.stdout, /s3cretpass|hunter22x|ghp_TOKENUSER1234567890/);
    assert.doesNotMatch(result.stdout, /\[redacted: user name\]/);
  });
});
