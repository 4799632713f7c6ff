/** Sent by the primary to each instance over the cluster channel: stop accepting and drain. */
export const DRAIN_MESSAGE = 'backplane:drain';
