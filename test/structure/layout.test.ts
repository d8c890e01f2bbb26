// The test folders follow one scheme (test/README.md): a test sits in the folder of the part its
// subject lives in — a folder of src/, the foundations or the entry points — or in one of the few
// cross-cutting folders. This test fails on a file the scheme has no place for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Folders beside the parts of src/: what each holds is in test/README.md. */
const CROSS_CUTTING = ['foundations', 'cli', 'browser', 'drills', 'package', 'structure'];

function partFolders(): string[] {
  return fs
    .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

describe('test layout', () => {
  it('every test file sits in the folder of a part of src/ or in one of the cross-cutting folders, one level deep', () => {
    const allowed = new Set([...partFolders(), ...CROSS_CUTTING]);
    const misplaced = fs
      .globSync('test/**/*.test.ts', { cwd: ROOT })
      .map((file) => file.split(path.sep).join('/'))
      .filter((file) => {
        const [, folder, name, ...deeper] = file.split('/');
        return deeper.length > 0 || name === undefined || !allowed.has(folder ?? '');
      });
    assert.deepEqual(misplaced, [], `test files outside the scheme of test/README.md (allowed folders: ${[...allowed].sort().join(', ')})`);
  });

  it('helpers live in test/helpers/ only: a part folder holds test files alone (the runner and the mutation script, test/mutations.ts, beside them)', () => {
    const stray = fs
      .globSync('test/**/*', { cwd: ROOT, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
      .filter(
        (file) =>
          !file.endsWith('.test.ts') &&
          !file.startsWith('test/helpers/') &&
          file !== 'test/run.ts' &&
          file !== 'test/mutations.ts' &&
          file !== 'test/README.md',
      );
    assert.deepEqual(stray, [], 'files beside the tests that belong in test/helpers/ (or nowhere)');
  });

  it("test/README.md's list of part folders is the test folders that exist; the parts it says have none have none", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'test/README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `test/<part>/` |')) ?? '';
    const [listed = '', without = ''] = row.split('The other folders of `src/`');
    const named = (text: string) => [...text.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1]!).filter((name) => partFolders().includes(name));
    const existing = fs
      .readdirSync(path.join(ROOT, 'test'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && partFolders().includes(entry.name))
      .map((entry) => entry.name);
    assert.deepEqual(named(listed).sort(), existing.sort(), 'the folders the row lists as having tests');
    assert.deepEqual([...named(without), ...existing].sort(), partFolders().sort(), 'every part is either a test folder or named as having none');
  });

  it('test/README.md names every folder the scheme allows', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'test/README.md'), 'utf8');
    const missing = [...partFolders(), ...CROSS_CUTTING, 'helpers'].filter(
      (folder) => !readme.includes(`\`${folder}\``) && !readme.includes(`test/${folder}/`),
    );
    assert.deepEqual(missing, []);
  });
});
