// Renumber and re-chain the committed migrations after a merge: files are taken in name order,
// numbered 000001… without gaps from the first renamed one on (existing numbers are kept while they
// are already in order), and each file's `Previous:`/`Hash:` headers are recomputed with
// graphile-migrate's own rule (calculateHash over the previous hash and the body). Run it after two
// branches each added a migration: `node migrations/scripts/rechain.ts` (prints what it changed).
// A database migrated before the rechain must be recreated (graphile-migrate checks the chain).
import fs from 'node:fs';
import path from 'node:path';
// @ts-expect-error graphile-migrate ships no types for its internal modules
import { calculateHash } from 'graphile-migrate/dist/hash.js';
// @ts-expect-error graphile-migrate ships no types for its internal modules
import { parseMigrationText, serializeMigration } from 'graphile-migrate/dist/migration.js';

const folder = path.resolve(import.meta.dirname, '../committed');
const files = fs
  .readdirSync(folder)
  .filter((name) => /^\d{6}(-[-\w]+)?\.sql$/.test(name))
  .sort();
let previous: string | null = null;
let lastNumber = 0;
for (const name of files) {
  const number = Number(name.slice(0, 6));
  const wanted = number > lastNumber ? number : lastNumber + 1;
  lastNumber = wanted;
  const newName = `${String(wanted).padStart(6, '0')}${name.slice(6)}`;
  const full = path.join(folder, name);
  const { headers, body } = parseMigrationText(full, fs.readFileSync(full, 'utf8'));
  const hash: string = calculateHash(body, previous);
  const text: string = serializeMigration(body, { Previous: previous ?? '-', Hash: hash, Message: headers.Message ?? undefined, ...rest(headers) });
  if (newName !== name) {
    fs.renameSync(full, path.join(folder, newName));
    process.stdout.write(`renamed ${name} → ${newName}\n`);
  }
  if (fs.readFileSync(path.join(folder, newName), 'utf8').trimEnd() !== text.trimEnd()) {
    fs.writeFileSync(path.join(folder, newName), text);
    process.stdout.write(`re-chained ${newName}\n`);
  }
  previous = hash;
}

function rest(headers: Record<string, string | null>): Record<string, string | undefined> {
  const { Previous: _p, Hash: _h, Message: _m, ...others } = headers;
  return Object.fromEntries(Object.entries(others).map(([key, value]) => [key, value ?? undefined]));
}
