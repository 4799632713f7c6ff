// Go-style durations (15m, 1h30m, 1.5h, 87600h), one parser for settings and commands.
/** Nanoseconds per unit of Go's duration syntax (time.ParseDuration). */
const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_NANOS = 2n ** 63n - 1n;
const WHOLE = /^(?:([+-]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)|([+-]?0))$/;
const PART = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/g;

/**
 * Parses Go's duration syntax ("87600h", "15m", "1h30m", "1.5h", "300ms") into exact nanoseconds,
 * as Go does, including its int64 range. Anything else is undefined.
 */
export function parseDurationNanos(text: string): bigint | undefined {
  const match = WHOLE.exec(text);
  if (!match) {
    return undefined;
  }
  if (match[3] !== undefined) {
    return 0n;
  }
  let total = 0n;
  for (const [, whole = '', fraction = '', unit] of match[2]!.matchAll(PART)) {
    const scale = UNITS[unit!]!;
    let nanos = BigInt(whole || '0') * scale;
    if (fraction) {
      // Truncated like Go: digits beyond the unit's resolution are dropped.
      nanos += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    }
    total += nanos;
    if (total > MAX_NANOS) {
      return undefined;
    }
  }
  return match[1] === '-' ? -total : total;
}

/** Whole seconds as the shortest Go duration that reads back the same: 87600h, 15m, 1h30m, 0s. */
export function formatDurationSeconds(seconds: number): string {
  if (!Number.isSafeInteger(seconds)) {
    throw new RangeError(`${seconds} is not a whole number of seconds`);
  }
  if (seconds === 0) {
    return '0s';
  }
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const hours = Math.floor(rest / 3600);
  rest -= hours * 3600;
  const minutes = Math.floor(rest / 60);
  rest -= minutes * 60;
  return `${sign}${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${rest ? `${rest}s` : ''}`;
}

/** Seconds of a duration written in Go's syntax, when it is a whole number of them. */
export function durationSeconds(text: string): number | undefined {
  const nanos = parseDurationNanos(text);
  if (nanos === undefined || nanos % 1_000_000_000n !== 0n) {
    return undefined;
  }
  return Number(nanos / 1_000_000_000n);
}
