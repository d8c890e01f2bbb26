// The README's commands, run as a new user would type them: through the shell, with npm and the
// system's own Node first on PATH (not the project's), and their output piped.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startKeyServer, type KeyServer } from '../helpers/servers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** A shell's PATH before `npm run` put the project's node_modules/.bin (and its Node 24) first. */
const USER_PATH = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((entry) => !entry.includes(`node_modules${path.sep}`))
  .join(path.delimiter);

/** Lines of the README's sh code blocks, comments cut. */
function shellLines(): string[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

function sh(command: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd: ROOT, env: { PATH: USER_PATH, HOME: process.env.HOME ?? '/root', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe("README's receiver example", () => {
  it("gives the kit the store's id (storeID), so another store's webhook is refused", () => {
    const section = README.slice(README.indexOf('## Receiving webhooks'));
    const examples = [...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const creating = examples.filter((example) => example.includes('createWebhookVerifier('));
    assert.ok(creating.length > 0, 'the README shows the kit');
    for (const example of creating) assert.match(example, /createWebhookVerifier\(\{[\s\S]*storeID:[\s\S]*\}\)/, example);
  });
});

describe('README, tried as a new user would', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('every CLI example prints exactly one JSON document (npm run -s), piped into a parser', async () => {
    const mentions = README.match(/npm run[^`\n]*kassa --/g) ?? [];
    assert.ok(mentions.length >= 3, 'the README shows the CLI');
    assert.deepEqual(
      mentions.filter((mention) => !mention.startsWith('npm run -s kassa --')),
      [],
      'every example uses npm run -s',
    );

    const create = shellLines().find((line) => line.includes('kassa -- store create'));
    const issue = shellLines().find((line) => line.includes('kassa -- token issue'));
    assert.ok(create && issue, 'the README creates a store and issues a token');
    const env = { DATABASE_URL: db.url, npm_config_update_notifier: 'false' };
    const parse = `node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>process.stdout.write(JSON.stringify(JSON.parse(s))))'`;
    const store = await sh(`${create} | ${parse}`, env);
    assert.equal(store.code, 0, store.stderr);
    const { id, name } = JSON.parse(store.stdout) as { id: string; name: string };
    assert.equal(name, 'My shop');
    const token = await sh(`${issue.replace('<store id>', id)} | ${parse}`, env);
    assert.equal(token.code, 0, token.stderr);
    assert.match((JSON.parse(token.stdout) as { token: string }).token, /^eyJ/);
  });

  it('the receiver example runs with the command given, whatever the system Node is', async () => {
    const command = shellLines().find((line) => line.includes('examples/webhook-receiver.ts'));
    assert.ok(command, 'the README gives a command for the receiver example');
    const section = README.slice(README.indexOf('## Receiving webhooks'));
    assert.match(
      section.slice(0, section.indexOf('\n## ', 5)),
      /WEBHOOK_ALLOW_INSECURE=true/,
      'a local receiver needs WEBHOOK_ALLOW_INSECURE=true, said where the example is',
    );
    assert.match(command, /KASSA_STORE_ID=\S+/, "the command gives the receiver its store's id");
    const keys: KeyServer = await startKeyServer([]);
    const storeId = '0b5e2c9a-1d2e-4f60-8a7b-9c0d1e2f3a4b';
    const run = command
      .replace(/KASSA_KEYS_URL=\S+/, `KASSA_KEYS_URL=${keys.url}`)
      .replace(/KASSA_STORE_ID=\S+/, `KASSA_STORE_ID=${storeId}`)
      .replace(/PORT=\d+/, 'PORT=0');
    const child = spawn('sh', ['-c', run], {
      cwd: ROOT,
      detached: true, // its own process group: npx, then node
      env: { PATH: USER_PATH, HOME: process.env.HOME ?? '/root', npm_config_update_notifier: 'false' },
    });
    try {
      let output = '';
      child.stderr.on('data', (chunk) => (output += chunk));
      const listening = await new Promise<boolean>((resolve) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          output += `${line}\n`;
          if (line.includes('webhook receiver listening')) resolve(true);
        });
        child.once('exit', () => resolve(false));
      });
      assert.ok(listening, `the receiver did not start: ${output}`);
      assert.ok(output.includes(`"storeID":"${storeId}"`), `the receiver checks the store it was given: ${output}`);
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(-child.pid!, 'SIGTERM');
        await exited;
      }
      await keys.close();
    }
  });
});
