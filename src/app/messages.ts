/** Sent by the primary to each instance over the cluster channel: stop accepting and drain. */
export const DRAIN_MESSAGE = 'backplane:drain';
/** Instance to primary: this instance's server no longer accepts connections. */
export const STOPPED_ACCEPTING_MESSAGE = 'backplane:stopped-accepting';
/** Primary to instance: no instance accepts on the port any more; keep-alive connections may now be closed. */
export const LISTENER_CLOSED_MESSAGE = 'backplane:listener-closed';
/** The primary's liveness ping, and an instance's answer: an instance whose event loop is stuck cannot answer. */
export const PING_MESSAGE = 'backplane:ping';
export const PONG_MESSAGE = 'backplane:pong';
