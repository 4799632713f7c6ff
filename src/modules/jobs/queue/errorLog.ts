/** How many attempt errors a job keeps, newest last, and how long each message may be. */
export const KEPT_ERRORS = 5;
export const MAX_ERROR_MESSAGE = 300;

/**
 * SQL for the job's errors with one more entry `{at, attempt, message}` appended and the oldest
 * dropped past KEPT_ERRORS: the row stays small however often a job fails.
 */
export function appendedErrorsSql(errors: string, attempt: string, message: string): string {
  return `jsonb_path_query_array(
    coalesce(${errors}, '[]'::jsonb) || jsonb_build_array(jsonb_build_object('at', now(), 'attempt', ${attempt}, 'message', left(${message}, ${MAX_ERROR_MESSAGE}))),
    '$[last - ${KEPT_ERRORS - 1} to last]')`;
}
