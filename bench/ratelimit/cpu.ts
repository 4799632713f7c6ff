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

/** CPU milliseconds used so far by each tree, keyed by its root pid (the root and all descendants). */
export function treeCpuMs(roots: number[]): Map<number, number> {
  const stats = readStats();
  const children = new Map<number, ProcessStat[]>();
  for (const stat of stats) {
    children.set(stat.parent, [...(children.get(stat.parent) ?? []), stat]);
  }
  const byPid = new Map(stats.map((stat) => [stat.pid, stat]));
  const totals = new Map<number, number>();
  for (const root of roots) {
    let ticks = 0;
    const stack = byPid.has(root) ? [byPid.get(root)!] : [];
    while (stack.length > 0) {
      const stat = stack.pop()!;
      ticks += stat.ticks;
      stack.push(...(children.get(stat.pid) ?? []));
    }
    totals.set(root, (ticks * 1000) / TICKS_PER_SECOND);
  }
  return totals;
}

/** This process's own CPU milliseconds (autocannon runs here). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
