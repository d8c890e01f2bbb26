// What a running `kassa start` tells the other commands run from the same directory (a second
// terminal): one small JSON file per process in ./.kassa/run/<pid>.json, written once the process
// has started and removed when it shuts down cleanly. A file whose process is gone (killed) is
// stale: readers skip it and remove it.
import fs from 'node:fs';
import path from 'node:path';

export interface RunRecord {
  pid: number;
  startedAt: string;
  api: boolean;
  worker: boolean;
  network: 'mainnet' | 'testnet' | 'sandbox';
  /** Where the API listens (its bound port), null for a worker-only process. */
  url: string | null;
  baseUrl: string;
  checkoutBaseUrl: string;
  /** The embedded PostgreSQL's port; null when the process uses DATABASE_URL. */
  embeddedPgPort: number | null;
}

/** The folder of the records: beside the embedded PostgreSQL's data (./.kassa/run). */
function runDir(kassaDir: string): string {
  return path.join(kassaDir, 'run');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes this process's record (atomically); returns what removes it again. */
export function writeRunRecord(kassaDir: string, record: RunRecord): () => void {
  const dir = runDir(kassaDir);
  const file = path.join(dir, `${record.pid}.json`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    const temporary = `${file}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: 0o644 });
    fs.renameSync(temporary, file);
  } catch {
    // A read-only directory: the other commands then need the environment, as before.
    return () => {};
  }
  return () => fs.rmSync(file, { force: true });
}

function parse(text: string): RunRecord | null {
  try {
    const value = JSON.parse(text) as Partial<RunRecord>;
    if (typeof value.pid !== 'number' || typeof value.baseUrl !== 'string' || typeof value.checkoutBaseUrl !== 'string') return null;
    if (value.embeddedPgPort !== null && typeof value.embeddedPgPort !== 'number') return null;
    if (value.url !== null && typeof value.url !== 'string') return null;
    return value as RunRecord;
  } catch {
    return null;
  }
}

/** The records of the processes still running from this directory, the newest first; stale ones are removed. */
export function readRunRecords(kassaDir: string): RunRecord[] {
  const dir = runDir(kassaDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const records: RunRecord[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let record: RunRecord | null;
    try {
      record = parse(fs.readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    if (record === null || record.pid === process.pid) continue;
    if (!alive(record.pid)) {
      fs.rmSync(file, { force: true });
      continue;
    }
    records.push(record);
  }
  return records.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
