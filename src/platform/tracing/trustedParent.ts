import { type Context, createContextKey } from '@opentelemetry/api';

// Apart from sampler.ts: the request frame's module is loaded with tracing off, which must load no SDK.
const TRUSTED_PARENT = createContextKey('backplane.trusted_parent');

/** `parent` with its remote parent marked as sent by a trusted proxy (APP_TRUSTED_PROXIES): its sampled flag is followed. */
export function trustRemoteParent(parent: Context): Context {
  return parent.setValue(TRUSTED_PARENT, true);
}

/** True when the request frame marked the context's remote parent as a trusted proxy's. */
export function remoteParentTrusted(context: Context): boolean {
  return context.getValue(TRUSTED_PARENT) === true;
}
