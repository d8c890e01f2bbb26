#!/usr/bin/env node
// The kassa command. Kassa runs on Node 24 (the project brings it as the npm package `node`);
// when started by an older system Node, hand over to the project's own.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const own = path.resolve(import.meta.dirname, '../node_modules/.bin/node');
  if (!existsSync(own)) {
    process.stderr.write(`kassa: needs Node.js 24 or newer (this is ${process.version}); run "npm install" first\n`);
    process.exit(1);
  }
  const result = spawnSync(own, [path.resolve(import.meta.dirname, '../src/cli.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
// Node keeps what it compiled (and the TypeScript it stripped) in its compile cache, so a
// command's second run skips that work (bench/cli.ts).
module.enableCompileCache?.();
const { runCli } = await import('../src/cli.ts');
runCli(process.argv.slice(2));
