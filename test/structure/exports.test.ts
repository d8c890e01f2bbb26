// Every export of src/ is imported somewhere (issue 49 item 6): an export nobody imports tells a reader
// that something outside the file needs it, and keeps dead code alive. The test parses src/, tasks/,
// test/, bench/, drills/ and bin/ with TypeScript's own parser (a devDependency already) and lists the
// exports of src/ that no other file imports — statically, re-exported, or destructured from an
// `await import(…)`. The cure is to drop `export` (or the declaration, when nothing uses it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The receiver kit is a published package (kassa-webhooks): its exports are its API, imported by merchants. */
const PUBLIC_API = new Set(['src/webhooks/receiver.ts']);

/**
 * Left while other work moves these files (issue 49 items 2–5: the routes, the treasury and the
 * reader split). Empty it as they land; an entry no longer unused fails the test too, so it only shrinks.
 */
const KNOWN: Record<string, readonly string[]> = {};

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function codeFiles(): string[] {
  return ['src', 'tasks', 'test', 'bench', 'drills', 'bin']
    .flatMap((dir) => fs.globSync(`${dir}/**/*.{ts,js,mjs}`, { cwd: ROOT }))
    .filter((file) => !file.includes('node_modules') && !file.split(path.sep).includes('static'))
    .map((file) => path.join(ROOT, file));
}

/** Every file's exported names, and every name imported from each file (`*`: the whole module). */
function scan(): { exported: Map<string, string[]>; imported: Map<string, Set<string>> } {
  const exported = new Map<string, string[]>();
  const imported = new Map<string, Set<string>>();
  const use = (from: string, specifier: string, name: string) => {
    if (!specifier.startsWith('.')) return;
    const target = rel(path.resolve(path.dirname(from), specifier));
    if (!imported.has(target)) imported.set(target, new Set());
    imported.get(target)!.add(name);
  };
  const bound = (pattern: ts.BindingName): string[] | null =>
    ts.isObjectBindingPattern(pattern) ? pattern.elements.map((e) => (e.propertyName ?? e.name).getText()) : null;
  for (const file of codeFiles()) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const names: string[] = [];
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const spec = node.moduleSpecifier.text;
        if (ts.isImportDeclaration(node)) {
          const clause = node.importClause;
          if (clause?.name) use(file, spec, 'default');
          const bindings = clause?.namedBindings;
          if (bindings && ts.isNamespaceImport(bindings)) use(file, spec, '*');
          else if (bindings) for (const e of bindings.elements) use(file, spec, (e.propertyName ?? e.name).text);
        } else if (!node.exportClause || !ts.isNamedExports(node.exportClause)) use(file, spec, '*');
        else for (const e of node.exportClause.elements) use(file, spec, (e.propertyName ?? e.name).text);
      } else if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const e of node.exportClause.elements) names.push(e.name.text);
      }
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
        const spec = node.arguments[0].text;
        let parent = node.parent;
        while (parent && (ts.isAwaitExpression(parent) || ts.isParenthesizedExpression(parent))) parent = parent.parent;
        let taken: string[] | null = null;
        if (parent && ts.isVariableDeclaration(parent)) taken = bound(parent.name);
        else if (parent && ts.isArrayLiteralExpression(parent)) {
          // const [{ a }, { b }] = await Promise.all([import('…'), import('…')])
          let declaration: ts.Node | undefined = parent.parent;
          while (declaration && !ts.isVariableDeclaration(declaration)) declaration = declaration.parent;
          const element = declaration && ts.isArrayBindingPattern(declaration.name) ? declaration.name.elements[parent.elements.indexOf(node)] : undefined;
          taken = element && ts.isBindingElement(element) ? bound(element.name) : null;
        } else if (parent && ts.isPropertyAccessExpression(parent)) taken = [parent.name.text];
        for (const name of taken ?? ['*']) use(file, spec, name);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    for (const statement of source.statements) {
      const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
      if (!modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      if (modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) names.push('default');
      else if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
      } else if ('name' in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) names.push((statement.name as ts.Identifier).text);
    }
    exported.set(rel(file), names);
  }
  return { exported, imported };
}

describe('exports', () => {
  it('every export of src/ is imported by another file (the known ones aside, only while their files move)', () => {
    const { exported, imported } = scan();
    assert.ok((exported.get('src/money.ts') ?? []).length > 5 && (imported.get('src/money.ts')?.size ?? 0) > 5, 'the scan found exports and imports');
    const unused: Record<string, string[]> = {};
    for (const [file, names] of exported) {
      if (!file.startsWith('src/') || PUBLIC_API.has(file)) continue;
      const used = imported.get(file) ?? new Set();
      if (used.has('*')) continue;
      const left = names.filter((name) => !used.has(name));
      if (left.length > 0) unused[file] = left;
    }
    const known = (file: string) => new Set(KNOWN[file] ?? []);
    const fresh = Object.fromEntries(
      Object.entries(unused)
        .map(([file, names]) => [file, names.filter((name) => !known(file).has(name))] as const)
        .filter(([, names]) => names.length > 0),
    );
    assert.deepEqual(fresh, {}, 'exports no other file imports: drop `export`, or the declaration when nothing uses it');
    const stale = Object.entries(KNOWN).flatMap(([file, names]) =>
      names.filter((name) => !(unused[file] ?? []).includes(name)).map((name) => `${file} ${name}`),
    );
    assert.deepEqual(stale, [], 'KNOWN lists exports that are now imported (or gone): remove them from the list');
  });
});
