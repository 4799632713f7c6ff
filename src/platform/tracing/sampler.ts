import { type Attributes, type Context, type Link, SpanKind, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  type IdGenerator,
  ParentBasedSampler,
  type Sampler,
  type SamplingResult,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { remoteParentTrusted } from './trustedParent.ts';

/**
 * The sampler OTEL_TRACES_SAMPLER names, except for a server span whose remote parent no trusted
 * proxy sent (trustedParent.ts; ADR 0130, amended for issue 45): anyone can write a traceparent,
 * so its sampled flag and its trace id are the caller's choice. Such a span is decided as a root
 * span is, on an id the caller did not choose: a ratio sampler compares the XOR of a trace id's
 * four 32-bit words with the ratio, so ids whose words cancel out would be sampled at any ratio.
 * The span still continues the caller's trace id, and the spans below it follow it as usual.
 */
export class TrustedParentSampler implements Sampler {
  private readonly configured: Sampler;
  private readonly ids: IdGenerator;

  /** `configured` decides (samplerFromEnv); `ids` draws the ids decided on for untrusted callers (the provider's own). */
  constructor(configured: Sampler, ids: IdGenerator) {
    this.configured = configured;
    this.ids = ids;
  }

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (kind === SpanKind.SERVER && trace.getSpanContext(context)?.isRemote && !remoteParentTrusted(context)) {
      return this.configured.shouldSample(trace.deleteSpan(context), this.ids.generateTraceId(), name, kind, attributes, links);
    }
    return this.configured.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `TrustedParent{${this.configured.toString()}}`;
  }
}

/**
 * The sampler of OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the specification's names and
 * defaults: parentbased_always_on, ratio 1). `traceidratio` decides every span without a parent,
 * or with a remote one, on its trace id as the specification's sampler does, but a span below one
 * of this process follows it: a server span decided for an untrusted caller (TrustedParentSampler)
 * is not decided on its trace id, and its statements must not be decided apart from it.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  const ratio = () => new TraceIdRatioBasedSampler(samplerRatio(env.OTEL_TRACES_SAMPLER_ARG));
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio': {
      const sampler = ratio();
      return new ParentBasedSampler({ root: sampler, remoteParentSampled: sampler, remoteParentNotSampled: sampler });
    }
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      process.emitWarning(`OTEL_TRACES_SAMPLER: "${name}" is not supported; sampling parentbased_always_on`);
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_TRACES_SAMPLER_ARG as a ratio from 0 to 1; unset or anything else is 1, as the specification says. */
function samplerRatio(value: string | undefined): number {
  const ratio = value === undefined || value.trim() === '' ? Number.NaN : Number(value);
  if (ratio >= 0 && ratio <= 1) {
    return ratio;
  }
  process.emitWarning(`OTEL_TRACES_SAMPLER_ARG: ${value === undefined ? 'unset' : `"${value}"`} is not a ratio from 0 to 1; sampling 1`);
  return 1;
}
