// CPU time of process trees from /proc (Linux), so a run reports what each decision cost in CPU,
// which other load on the machine does not change the way it changes requests per second.
// Each process's time is its threads' run time from schedstat, in nanoseconds: /proc/<pid>/stat
// counts 10 ms ticks, and a run of a few thousand decisions is only 10-40 of them (issue 16).
import { readFileSync, readdirSync } from 'node:fs';

const NS_PER_TICK = 10_000_000;

interface ProcessStat {
  pid: number;
  parent: number;
  /** CPU nanoseconds so far: from schedstat, or from ticks where the kernel has no schedstat. */
  ns: number;
}

/** The process's threads' run time in nanoseconds, or undefined without schedstat. */
function runNs(pid: string): number | undefined {
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    }
    return Number.isFinite(total) ? total : undefined;
  } catch {
    return undefined;
  }
}

function readStats(): ProcessStat[] {
  const stats: ProcessStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.push({ pid: Number(name), parent: Number(fields[1]), ns: (Number(fields[11]) + Number(fields[12])) * NS_PER_TICK });
    } catch {
      // the process ended while listing
    }
  }
  return stats;
}

/** CPU nanoseconds so far of every process in each tree, keyed by root pid, then by process pid. */
export function treeCpu(roots: number[]): Map<number, Map<number, number>> {
  const stats = readStats();
  const children = new Map<number, ProcessStat[]>();
  for (const stat of stats) {
    children.set(stat.parent, [...(children.get(stat.parent) ?? []), stat]);
  }
  const byPid = new Map(stats.map((stat) => [stat.pid, stat]));
  const trees = new Map<number, Map<number, number>>();
  for (const root of roots) {
    const tree = new Map<number, number>();
    const stack = byPid.has(root) ? [byPid.get(root)!] : [];
    while (stack.length > 0) {
      const stat = stack.pop()!;
      tree.set(stat.pid, runNs(String(stat.pid)) ?? stat.ns);
      stack.push(...(children.get(stat.pid) ?? []));
    }
    trees.set(root, tree);
  }
  return trees;
}

/**
 * CPU milliseconds each tree used between two readings: processes alive at the end count from
 * their first reading (or from zero when new); processes that ended meanwhile (idle pool
 * connections closing) cannot be read and are left out.
 */
export function cpuMsBetween(before: Map<number, Map<number, number>>, after: Map<number, Map<number, number>>, root: number): number {
  let ns = 0;
  for (const [pid, end] of after.get(root) ?? []) {
    ns += end - (before.get(root)?.get(pid) ?? 0);
  }
  return ns / 1e6;
}

/** This process's own CPU milliseconds (autocannon runs here). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
