// CPU time of process trees from /proc (Linux), so a run reports what each decision cost in CPU,
// which other load on the machine does not change the way it changes requests per second.
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface ProcessStat {
  pid: number;
  parent: number;
  ticks: number;
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
      stats.push({ pid: Number(name), parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended while listing
    }
  }
  return stats;
}

/** CPU ticks so far of every process in each tree, keyed by root pid, then by process pid. */
export function treeTicks(roots: number[]): Map<number, Map<number, number>> {
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
      tree.set(stat.pid, stat.ticks);
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
  let ticks = 0;
  for (const [pid, end] of after.get(root) ?? []) {
    ticks += end - (before.get(root)?.get(pid) ?? 0);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** This process's own CPU milliseconds (autocannon runs here). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
