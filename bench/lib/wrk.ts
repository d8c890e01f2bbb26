// Runs wrk (the HTTP load generator, C; Debian package `wrk`) against a URL with a Lua script and
// reads its figures: requests, non-2xx answers, socket errors, p50/p99 latency (--latency). wrk is
// the default driver of bench/api: it costs the machine less CPU per request than any driver
// written in Node, and its CPU is measured (it is a child process that exits).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const WRK = process.env.WRK ?? '/usr/bin/wrk';

export interface WrkOptions {
  url: string;
  connections: number;
  seconds: number;
  /** The Lua script's text (wrk -s). */
  script: string;
  binary?: string;
}

export interface WrkResult {
  /** 2xx (and 3xx) answers per second. */
  requestsPerSecond: number;
  completed: number;
  succeeded: number;
  /** Non-2xx/3xx answers plus socket errors (connect, read, write, timeout). */
  errors: number;
  errorKinds: Map<string, number>;
  p50Ms: number;
  p99Ms: number;
  elapsedMs: number;
  output: string;
}

/** `wrk --version` (it prints to stdout and exits 1) → "wrk 4.1.0 …", or null when it cannot run. */
export async function wrkVersion(binary = WRK): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(binary, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', () => resolve(null));
    child.on('close', () => resolve(/^wrk \S+/.exec(out.trim())?.[0] ?? null));
  });
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const toMs = (text: string | undefined): number => {
  const match = text === undefined ? null : /^([\d.]+)(us|ms|s|m)$/.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]!]! : Number.NaN;
};

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kassa-wrk-'));
  try {
    const scriptFile = path.join(dir, 'script.lua');
    fs.writeFileSync(scriptFile, options.script);
    const threads = Math.min(2, options.connections);
    const args = [
      '-t',
      String(threads),
      '-c',
      String(options.connections),
      '-d',
      `${options.seconds}s`,
      '--latency',
      '--timeout',
      '30s',
      '-s',
      scriptFile,
      options.url,
    ];
    const started = performance.now();
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve, reject) => {
      const child = spawn(options.binary ?? WRK, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('close', (exit) => resolve({ code: exit ?? 1, output: text }));
    });
    const elapsedMs = performance.now() - started;
    if (code !== 0) throw new Error(`wrk exited with ${code}:\n${output.trim()}`);
    const completed = Number(/(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(output)?.[1] ?? Number.NaN);
    const seconds = toMs(/\d+ requests in ([\d.]+(?:us|ms|s|m))/.exec(output)?.[1]) / 1000;
    const errorKinds = new Map<string, number>();
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
    if (non2xx > 0) errorKinds.set('non-2xx', non2xx);
    const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
    if (socket) {
      ['connect', 'read', 'write', 'timeout'].forEach((kind, index) => {
        const count = Number(socket[index + 1]);
        if (count > 0) errorKinds.set(`socket ${kind}`, count);
      });
    }
    const errors = [...errorKinds.values()].reduce((sum, count) => sum + count, 0);
    const succeeded = completed - non2xx;
    return {
      requestsPerSecond: succeeded / seconds,
      completed,
      succeeded,
      errors,
      errorKinds,
      p50Ms: toMs(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
      p99Ms: toMs(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
      elapsedMs,
      output,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const lua = (text: string): string => JSON.stringify(text); // a JSON string is a valid Lua string literal for ASCII text

/**
 * A wrk script sending `method path` with `headers` and `body`. `idempotencyKey` adds a fresh
 * random UUID v4 X-Idempotency-Key to every request (each thread seeded apart); `pathsFile` picks
 * the path of each request at random among the lines of that file.
 */
export function wrkScript(spec: {
  method: 'GET' | 'POST';
  path?: string;
  headers: Record<string, string>;
  body?: string;
  idempotencyKey?: boolean;
  pathsFile?: string;
}): string {
  const lines = [
    `wrk.method = ${lua(spec.method)}`,
    ...Object.entries(spec.headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    ...(spec.body !== undefined ? [`wrk.body = ${lua(spec.body)}`] : []),
    'local counter = 0',
    'function setup(thread) counter = counter + 1; thread:set("seed", counter * 7919 + os.time()) end',
    'local paths = {}',
    'function init(args)',
    '  math.randomseed(seed or os.time())',
    ...(spec.pathsFile ? [`  for line in io.lines(${lua(spec.pathsFile)}) do if line ~= "" then paths[#paths + 1] = line end end`] : []),
    'end',
    'local r = math.random',
    'local function uuid() return string.format("%04x%04x-%04x-4%03x-%04x-%04x%04x%04x", r(0, 65535), r(0, 65535), r(0, 65535), r(0, 4095), 32768 + r(0, 16383), r(0, 65535), r(0, 65535), r(0, 65535)) end',
    'function request()',
    `  local path = ${spec.pathsFile ? 'paths[r(1, #paths)]' : lua(spec.path ?? '/')}`,
    spec.idempotencyKey ? '  wrk.headers["X-Idempotency-Key"] = uuid()' : '',
    '  return wrk.format(nil, path)',
    'end',
  ];
  return `${lines.filter((line) => line !== '').join('\n')}\n`;
}
