// The shape of the code: which part may import which. A module belongs to the folder it sits in
// under src/ (http, payments, chain, …) or is one of the few shared foundations at src/'s top;
// tasks/ is its own part. The test reads every import (static, type-only, re-export and dynamic)
// of src/ and tasks/ as text and fails on a cycle between files, a cycle between parts, or an
// arrow that mixes layers (listed in FORBIDDEN with the reason; docs/ARCHITECTURE.md draws it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Top-level modules of src/ everyone may use; they import nothing but db/ and each other. */
const FOUNDATIONS = new Set(['config', 'log', 'errors', 'money', 'metrics', 'idempotency', 'uuid', 'runState']);
/** Top-level modules that put the parts together (the command line and the service). */
const ENTRY_POINTS = new Set(['cli', 'server']);

/** Arrows that would mix layers: [from part, to part, why]. */
const FORBIDDEN: Array<[string, string, string]> = [
  ['payments', 'http', 'the domain takes domain types, not request bodies or HTTP helpers'],
  ['payments', 'checkout', 'the domain knows nothing of the hosted page'],
  ['payments', 'reader', 'the chain reader books into payments, not the other way round'],
  ['chain', 'http', 'HTTP routes live under src/http, the chain knows nothing of HTTP'],
  ['chain', 'payments', 'the chain client and emulator know nothing of payments'],
  ['chain', 'reader', 'the chain client knows nothing of who reads it'],
  ['webhooks', 'payments', 'webhooks deliver what payments enqueue; they do not call back into payments'],
  ['webhooks', 'http', 'webhook delivery is a job, not a request handler'],
  ['checkout', 'http', 'the checkout page is rendered by routes in src/http, never the reverse'],
  ['rates', 'payments', 'rates are a catalogue the domain reads'],
  ['payments', 'treasury', 'money out is built on payments; completion tells it through a hook (recordTransfer onCompleted)'],
  ['chain', 'treasury', 'the chain client knows nothing of what Kassa sends'],
  ['payments', 'presenters', 'the domain answers views and rows; the routes present them (src/presenters/)'],
  ['treasury', 'presenters', 'money out answers rows; the routes present them (src/presenters/)'],
  ['presenters', 'checkout', 'the checkout page shows what the presenters shape, never the reverse'],
  ['payments', 'dashboard', 'the dashboard reads and acts through the domain; the domain knows nothing of it'],
  ['treasury', 'dashboard', "refunds from the dashboard call the treasury's command; money out knows nothing of who asked"],
  ['webhooks', 'dashboard', "redelivery from the dashboard calls the webhooks' command; webhooks know nothing of who asked"],
  ['dashboard', 'presenters', "the dashboard renders pages from the domain's views and rows, not the API's JSON shapes"],
  ['web', 'checkout', 'the web foundation (html tag, CSP, base.css, assets) is beneath both UIs, never one of them'],
  ['web', 'dashboard', 'the web foundation (html tag, CSP, base.css, assets) is beneath both UIs, never one of them'],
  ['web', 'http', 'the web foundation is what pages are made of; routes use it, never the reverse'],
];

type Graph = Map<string, Set<string>>;

/** A relative import; group 1 is set for `import type … from` and `export type … from`. */
const IMPORT = /(?:\b(?:import|export)\s+(type\s)?[^'";]*?\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(): string[] {
  return [...fs.globSync('src/**/*.ts', { cwd: ROOT }), ...fs.globSync('tasks/**/*.ts', { cwd: ROOT })].map((file) => file.split(path.sep).join('/')).sort();
}

/** Every import, and the imports that run code (type-only ones erased), file by file. */
function importGraphs(files: string[]): { all: Graph; runtime: Graph } {
  const all: Graph = new Map();
  const runtime: Graph = new Map();
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    all.set(file, new Set());
    runtime.set(file, new Set());
    for (const match of text.matchAll(IMPORT)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[2]!));
      all.get(file)!.add(target);
      if (match[1] === undefined) runtime.get(file)!.add(target);
    }
  }
  return { all, runtime };
}

/** `payments` for src/payments/…, `errors` for src/errors.ts, `tasks` for tasks/…. */
function partOf(file: string): string {
  const [top, second, third] = file.split('/');
  if (top === 'tasks') return 'tasks';
  return third === undefined ? second!.replace(/\.ts$/, '') : second!;
}

/** Strongly connected components with more than one member (Tarjan). */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function partGraph(graph: Graph): { parts: Graph; arrows: Map<string, string[]> } {
  const parts: Graph = new Map();
  const arrows = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    const from = partOf(file);
    if (!parts.has(from)) parts.set(from, new Set());
    for (const target of targets) {
      const to = partOf(target);
      if (to === from) continue;
      parts.get(from)!.add(to);
      const key = `${from} -> ${to}`;
      arrows.set(key, [...(arrows.get(key) ?? []), `${file} imports ${target}`]);
    }
  }
  return { parts, arrows };
}

describe('architecture: parts and the arrows between them', () => {
  const files = sourceFiles();
  const { all: graph, runtime } = importGraphs(files);
  const { parts, arrows } = partGraph(graph);

  it('finds the modules and their imports (the scan works)', () => {
    assert.ok(files.length > 50, `${files.length} files`);
    assert.ok(graph.get('src/http/app.ts')?.has('src/http/guards.ts'));
    assert.ok(arrows.has('http -> payments'));
  });

  it('every import names a file that exists', () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      [...targets].filter((target) => !fs.existsSync(path.join(ROOT, target))).map((target) => `${file} -> ${target}`),
    );
    assert.deepEqual(missing, []);
  });

  it('every module belongs to a named part: a folder of src/, a foundation or an entry point', () => {
    const loose = files.filter(
      (file) => file.startsWith('src/') && file.split('/').length === 2 && !FOUNDATIONS.has(partOf(file)) && !ENTRY_POINTS.has(partOf(file)),
    );
    assert.deepEqual(loose, []);
  });

  it('no module imports itself back through others (no cycle between files; type-only imports are erased)', () => {
    assert.deepEqual(cycles(runtime), []);
  });

  it('no cycle between parts', () => {
    const found = cycles(parts);
    const detail = found.map((component) =>
      component.flatMap((from) => component.filter((to) => to !== from).flatMap((to) => arrows.get(`${from} -> ${to}`) ?? [])).join('\n'),
    );
    assert.deepEqual(found, [], detail.join('\n\n'));
  });

  it('no forbidden arrow', () => {
    const broken: string[] = [];
    for (const [from, to, why] of FORBIDDEN) {
      for (const target of parts.get(from) ?? []) {
        if (to !== '*' && target !== to) continue;
        broken.push(`${from} -> ${target} (${why}):\n  ${(arrows.get(`${from} -> ${target}`) ?? []).join('\n  ')}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('routes hold no stream lifecycle: event streams (their counts, heartbeat, lifetime, shutdown) are checkout/liveStreams.ts', () => {
    const found = files
      .filter((file) => file.startsWith('src/http/'))
      .filter((file) => /\bnew PassThrough\(|\bsetInterval\(/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
    assert.deepEqual(found, []);
  });

  it('foundations import only db/ and other foundations, db/ only foundations; entry points are imported by no part, http/ only by them', () => {
    const wrong: string[] = [];
    for (const [from, targets] of parts) {
      for (const to of targets) {
        if (FOUNDATIONS.has(from) && to !== 'db' && !FOUNDATIONS.has(to)) wrong.push(`${from} -> ${to}`);
        if (from === 'db' && !FOUNDATIONS.has(to)) wrong.push(`${from} -> ${to}`);
        if (ENTRY_POINTS.has(to) && !ENTRY_POINTS.has(from)) wrong.push(`${from} -> ${to}`);
        if (to === 'http' && !ENTRY_POINTS.has(from)) wrong.push(`${from} -> ${to} (only the entry points mount the HTTP layer)`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
