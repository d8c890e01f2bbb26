// A node:test reporter (test/run.ts adds it beside spec): at the end, the test files that took longest
// (each file's own summary: its tests and hooks, without its process's start), so the suite's time
// budget has a culprit list.
import type { TestEvent } from 'node:test/reporters';

export default async function* slowestFiles(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const byFile: Array<[string, number]> = [];
  for await (const event of source) {
    if (event.type === 'test:summary' && event.data.file) byFile.push([event.data.file, event.data.duration_ms]);
  }
  const slowest = byFile.sort((a, b) => b[1] - a[1]).slice(0, 12);
  if (slowest.length === 0) return;
  yield `slowest test files:\n${slowest.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(`${process.cwd()}/`, '')}`).join('\n')}\n`;
}
