// Where the CPU went during a benchmark cell (Linux /proc): the whole machine, and single processes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time (ms) spent by the whole machine so far, busy (not idle, not iowait); null off Linux. */
export function machineBusyMs(): number | null {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user)
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return ((user + nice + system + irq + softirq + steal) * 1000) / clockTicks();
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command name (field 3, `state`, is index 0). */
function statFields(pid: number | 'self'): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command (field 2) may contain spaces: the other fields start after its last ")".
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

// Indexes into statFields(): ppid (field 4), utime, stime, cutime, cstime (fields 14 to 17).
const PPID = 1;
const UTIME = 11;
const STIME = 12;
const CUTIME = 13;
const CSTIME = 14;

/** CPU time (ms, user + system) spent so far by process `pid`; null when unreadable. */
export function processCpuMs(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? ((Number(fields[UTIME]) + Number(fields[STIME])) * 1000) / clockTicks() : null;
}

/** CPU time (ms) of this process's children that have exited and been waited for (e.g. pgbench). */
export function exitedChildrenCpuMs(): number | null {
  const fields = statFields('self');
  return fields ? ((Number(fields[CUTIME]) + Number(fields[CSTIME])) * 1000) / clockTicks() : null;
}

/** The parent pid of `pid` (for a PostgreSQL backend: its postmaster); null when unreadable. */
export function parentPid(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[PPID]) : null;
}

/** Every process below `pid`, children first (Linux /proc; none where there is no /proc). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  const pids = fs.existsSync('/proc')
    ? fs
        .readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .map(Number)
    : [];
  for (const entry of pids) {
    const parent = parentPid(entry);
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), entry]);
  }
  const found: number[] = [];
  let level = [pid];
  while (level.length > 0) {
    level = level.flatMap((parent) => children.get(parent) ?? []);
    found.push(...level);
  }
  return found;
}

/**
 * CPU time (ms) of a whole PostgreSQL server: the postmaster, its live children (backends,
 * background processes) and its exited children (which the postmaster has waited for).
 */
export function serverTreeCpuMs(postmasterPid: number): number | null {
  const root = statFields(postmasterPid);
  if (!root) return null;
  let ticks = Number(root[UTIME]) + Number(root[STIME]) + Number(root[CUTIME]) + Number(root[CSTIME]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[PPID]) === postmasterPid) ticks += Number(fields[UTIME]) + Number(fields[STIME]);
  }
  return (ticks * 1000) / clockTicks();
}

export interface CpuSample {
  machineMs: number | null;
  processes: Map<string, number | null>;
}

/** A snapshot of the machine and of named meters (each returns CPU ms so far, or null). */
export function sampleCpu(meters: Record<string, () => number | null>): CpuSample {
  return {
    machineMs: machineBusyMs(),
    processes: new Map(Object.entries(meters).map(([name, read]) => [name, read()])),
  };
}

/** CPU ms used between two snapshots, per name, plus `machine`. */
export function cpuBetween(before: CpuSample, after: CpuSample): Map<string, number | null> {
  const result = new Map<string, number | null>();
  result.set('machine', before.machineMs === null || after.machineMs === null ? null : after.machineMs - before.machineMs);
  for (const [name, start] of before.processes) {
    const end = after.processes.get(name) ?? null;
    result.set(name, start === null || end === null ? null : end - start);
  }
  return result;
}
