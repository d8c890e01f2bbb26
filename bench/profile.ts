// The top self-time frames of a V8 CPU profile (`node --cpu-prof`, e.g. `node bench/api.ts --cpu-prof DIR`):
// prints nothing else and asserts nothing.
//
//   node bench/profile.ts FILE.cpuprofile [--top 10] [--skip-seconds 0 | --last-seconds N] [--owner NAME]
//
// `--owner kassa` (or a package's name, `node:`, `(V8)`) ranks only that owner's frames (shares
// still of all busy samples).
// Each frame is a function at its place (name, file, line); its share is of the process's busy
// samples (every sample but V8's `(idle)`), its time the sum of the samples' intervals. Frames of
// node_modules are named by their package; `--skip-seconds N` leaves out the first N seconds of the
// profile (the process starting, the benchmark's setup). Also prints the busy time by package (the
// file's package under node_modules, `node:` for Node's own, `kassa` for src/), self time only.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { textTable } from './lib/stats.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const USAGE = 'usage: node bench/profile.ts FILE.cpuprofile [--top 10] [--skip-seconds 0 | --last-seconds N] [--owner NAME]';
const usage = (message: string): never => {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
};
const { values: flags, positionals } = parseArgs({
  options: {
    top: { type: 'string', default: '10' },
    'skip-seconds': { type: 'string', default: '0' },
    'last-seconds': { type: 'string' },
    owner: { type: 'string' },
  },
  allowPositionals: true,
  strict: true,
});
const file = positionals[0];
if (!file) usage('a .cpuprofile file is needed');
const top = Number(flags.top);
const profile = JSON.parse(fs.readFileSync(file!, 'utf8')) as CpuProfile;
const totalUs = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
// `--last-seconds N`: the last N seconds only (bench/api's cell ends a moment before Kassa is stopped).
const skipUs = flags['last-seconds'] !== undefined ? Math.max(0, totalUs - Number(flags['last-seconds']) * 1e6) : Number(flags['skip-seconds']) * 1e6;

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

/** Where a frame lives: a package of node_modules, Node itself, or Kassa's own source. */
function ownerOf(url: string): string {
  if (url === '') return '(V8)';
  if (url.startsWith('node:')) return 'node:';
  const parts = url.split('/node_modules/');
  if (parts.length > 1) {
    const rest = parts.at(-1)!.split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = url.indexOf('/src/');
  return src >= 0 ? 'kassa' : path.basename(url);
}

function frameName(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (frame.url === '') return name;
  const owner = ownerOf(frame.url);
  const where = owner === 'kassa' ? frame.url.slice(frame.url.indexOf('/src/') + 1) : owner === 'node:' ? frame.url : `${owner}/${path.basename(frame.url)}`;
  return `${name} ${where}:${frame.lineNumber + 1}`;
}

const byFrame = new Map<string, number>();
const byOwner = new Map<string, number>();
let busyUs = 0;
let idleUs = 0;
let elapsedUs = 0;
for (const [index, id] of profile.samples.entries()) {
  const delta = profile.timeDeltas[index] ?? 0;
  elapsedUs += delta;
  if (elapsedUs < skipUs) continue;
  const frame = nodes.get(id)!.callFrame;
  if (frame.functionName === '(idle)') {
    idleUs += delta;
    continue;
  }
  busyUs += delta;
  if (flags.owner !== undefined && ownerOf(frame.url) !== flags.owner) continue;
  const name = frameName(frame);
  byFrame.set(name, (byFrame.get(name) ?? 0) + delta);
  const owner = ownerOf(frame.url);
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + delta);
}

const share = (us: number) => `${((100 * us) / busyUs).toFixed(1)} %`;
const ranked = (map: Map<string, number>, n: number) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us], index) => [String(index + 1), name, share(us), `${(us / 1000).toFixed(0)} ms`]);

const out: string[] = [];
out.push(
  `${path.basename(file!)}: ${(busyUs / 1e6).toFixed(1)} s busy, ${(idleUs / 1e6).toFixed(1)} s idle${skipUs > 0 ? ` (the last ${((totalUs - skipUs) / 1e6).toFixed(1)} s)` : ''}`,
);
out.push('');
out.push(textTable(['#', `top ${top} frames by self time`, 'share of busy', 'self'], ranked(byFrame, top)));
out.push('');
out.push(textTable(['#', 'self time by owner', 'share of busy', 'self'], ranked(byOwner, 12)));
process.stdout.write(`${out.join('\n')}\n`);
