/**
 * What an instance knows of the running instances, for deciding alone with its share of a limit
 * (ADR 0020, "The count").
 */
export interface ShareCount {
  /** Running instances as read at the last good beat (this one included); undefined before it. */
  counted: number | undefined;
  /**
   * Whether this instance may decide alone, and then with floor(limit / counted): no instance that
   * may decide alone at the same time is missing from the count of any of them.
   */
  sure: boolean;
}

/** One beat's reading of the running rows, this instance's own written just before. */
export interface CountedBeat {
  /** Running instances, this one included. */
  running: number;
  /** The least count written in every running row, this instance's own (the count it held, or less) included. */
  leastCounted: number;
  /**
   * Every other running row has beaten since this instance's first beat after it registered, so
   * that beat read this row. (Not "since its previous beat": an instance beating every second
   * would then need the others, beating every interval, to fall in the same second, which phases
   * can keep from happening for minutes.)
   */
  othersBeatSince: boolean;
}

export const UNCOUNTED: ShareCount = { counted: undefined, sure: false };

/**
 * The count after a beat. An instance becomes sure once every running instance (itself included)
 * holds a count at least as large as the one it reads, and each has beaten since this one first
 * beat after registering: then none of them can still act on a beat that missed it. Once sure it stays sure
 * with every later reading: a later beat reads every running row (a newcomer's too), and a newcomer
 * waits until this one has written what it read. The count written is never more than the count
 * held, so a row never claims a count its instance does not act on.
 */
export function countShares(previous: ShareCount, beat: CountedBeat): ShareCount {
  const sure = previous.sure || (beat.leastCounted >= beat.running && beat.othersBeatSince);
  return { counted: beat.running, sure };
}

/** The divisor of a share while deciding alone: undefined (grant nothing) until sure. */
export const shareDivisor = (count: ShareCount): number | undefined => (count.sure ? count.counted : undefined);
