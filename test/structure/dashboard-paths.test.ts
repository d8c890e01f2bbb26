// The dashboard's URLs come from src/dashboard/paths.ts (issue 33: a paths helper, BTCPay's
// `asp-action`): a page or a dashboard route asks for a path by what it is and never spells one. The
// test parses the dashboard's modules (TypeScript's parser, so comments and route patterns are not
// mistaken for URLs) and fails where a URL is built by hand: a template literal whose text goes on
// with a path after an interpolation (`${root}/stores/…`, `${at.payments()}/x`), a string joined
// to a path with `+`, or a literal naming /dashboard/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The one module allowed to spell the dashboard's paths. */
const PATHS_MODULE = 'src/dashboard/paths.ts';

/** The dashboard's modules: its pages and helpers, and its routes under src/http/routes/. */
function dashboardModules(): string[] {
  return [...fs.globSync('src/dashboard/**/*.ts', { cwd: ROOT }), ...fs.globSync('src/http/routes/dashboard*.ts', { cwd: ROOT })]
    .map((file) => file.split(path.sep).join('/'))
    .filter((file) => file !== PATHS_MODULE)
    .sort();
}

/** A path segment after an interpolation: `}/word` (not the API's /v1/…: the checkout's URLs). */
const PATH_AFTER = /^\/(?!v1\/)[A-Za-z]/;
const NAMES_DASHBOARD = /\/dashboard\//;
/** A route pattern (`/stores/:storeId`), which the router reads, not a URL. */
const ROUTE_PATTERN = /\/:/;

/** Paths spelt on purpose, with why. */
const ALLOWED: ReadonlyArray<{ file: string; startsWith: string; why: string }> = [
  {
    file: 'src/http/routes/dashboardPayments.ts',
    startsWith: '`dashboard POST /payments/',
    why: "the refund confirmation's idempotency endpoint name (stored with its keys), not a URL",
  },
];

/** Each hand-built URL of a module's source, as `line: text`. */
export function handBuiltUrls(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const report = (node: ts.Node) => {
    if (ROUTE_PATTERN.test(node.getText(file))) return;
    if (ALLOWED.some((allowed) => allowed.file === fileName && node.getText(file).startsWith(allowed.startsWith))) return;
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push(`${fileName}:${line}: ${node.getText(file).slice(0, 100)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isTemplateExpression(node)) {
      if (
        NAMES_DASHBOARD.test(node.head.text) ||
        node.templateSpans.some((span) => PATH_AFTER.test(span.literal.text) || NAMES_DASHBOARD.test(span.literal.text))
      ) {
        report(node);
      }
    } else if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && NAMES_DASHBOARD.test(node.text)) {
      report(node);
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.PlusToken &&
      (ts.isStringLiteral(node.right) || ts.isNoSubstitutionTemplateLiteral(node.right)) &&
      PATH_AFTER.test(node.right.text)
    ) {
      report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('dashboard paths', () => {
  it('the rule finds a hand-built URL in each of its forms, and not a route pattern, markup or a comment', () => {
    // Written with #{…} for ${…} (a string of source text, not a template).
    const sample = [
      '// `#{root}/stores/#{id}` in a comment',
      "router.get('/stores/:storeId/payments', page);",
      'const a = `#{root}/stores/#{store.id}/payments`;',
      'const b = html`<a href="#{storeRoot}/payments/#{p.id}">#{p.id}</a>`;',
      "const c = root + '/sign-in';",
      "const d = 'https://shop.example/dashboard/invite/x';",
      'const e = html`<td>#{x}</td><td>#{paths.home}</td>`;',
      "import { a } from '../../dashboard/pages.ts';",
      'const f = { prefix: `#{R}/stores/:storeId` };',
      'const g = `#{config.checkoutBaseUrl}/v1/webhook/keys`;',
    ]
      .join('\n')
      .replaceAll('#{', '${');
    assert.deepEqual(
      handBuiltUrls('sample.ts', sample).map((hit) => hit.split(':')[1]),
      ['3', '4', '5', '6'],
    );
  });

  it('no dashboard page or route builds a dashboard URL by hand: src/dashboard/paths.ts makes them all', () => {
    const modules = dashboardModules();
    assert.ok(modules.includes('src/dashboard/pages.ts') && modules.includes('src/http/routes/dashboard.ts'), 'the dashboard modules are found');
    const hits = modules.flatMap((file) => handBuiltUrls(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));
    assert.deepEqual(hits, [], 'URLs built by hand: add a helper to src/dashboard/paths.ts and use it');
  });
});
