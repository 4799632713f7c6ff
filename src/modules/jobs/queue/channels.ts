/** NOTIFY channels of the queue; their payloads are names and ids, never a job's payload. */

/** A job became available in a queue (payload: the queue's name): added, released, resumed, retried now. */
export const QUEUE_JOBS_CHANNEL = 'backplane_queue_jobs';

/** A running job was cancelled (payload: its id): the instance running it aborts its handler. */
export const QUEUE_CANCEL_CHANNEL = 'backplane_queue_cancel';

/** States a job is unfinished in: its key is held, and it is counted in the queue's depth. */
export const UNFINISHED_STATES = ['available', 'scheduled', 'retryable', 'running'] as const;

export type JobState = (typeof UNFINISHED_STATES)[number] | 'completed' | 'discarded' | 'cancelled';
