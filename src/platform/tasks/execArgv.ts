// Worker threads refuse V8 and process-wide options (--max-old-space-size, --perf-basic-prof,
// --title, --inspect, ...): handed one, a thread fails to start, and an instance that keeps a
// warm thread fails with it. Threads need only what decides how code loads.
const LOADING_OPTIONS_WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C', '--disable-warning']);
const LOADING_SWITCHES = new Set([
  '--enable-source-maps',
  '--no-warnings',
  '--no-deprecation',
  '--trace-warnings',
  '--trace-deprecation',
  '--pending-deprecation',
]);

/** The options of `parent` (a process's execArgv) a worker thread accepts and needs, in order. */
export function threadOptions(parent: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < parent.length; index += 1) {
    const option = parent[index]!;
    const name = option.split('=', 1)[0]!;
    if (LOADING_OPTIONS_WITH_VALUE.has(name)) {
      kept.push(option);
      if (name === option && index + 1 < parent.length) {
        index += 1;
        kept.push(parent[index]!);
      }
    } else if (LOADING_SWITCHES.has(name) || /^--(no-)?experimental-/.test(name)) {
      kept.push(option);
    }
  }
  return kept;
}
