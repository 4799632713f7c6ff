import { BlockList, isIPv4 } from 'node:net';
import { ipv6Groups, normaliseAddress } from '../addresses.ts';

// Address parsing is no HTTP matter: use cases import it from platform/addresses.ts (ADR 0120).
export { addressNetwork, normaliseAddress } from '../addresses.ts';

/** One trusted proxy range: a network and its prefix length. */
export interface ProxyRange {
  network: string;
  prefix: number;
  family: 4 | 6;
}

const MAX_REMEMBERED_PEERS = 1_024;
/** An address (canonical, as normaliseAddress gives it) as a number of 32 or 128 bits. */
function addressBits(address: string): bigint {
  if (!address.includes(':')) {
    return BigInt(ipv4Number(address));
  }
  return ipv6Groups(address).reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const IPV4_MAPPED_BASE = 0xffffn << 32n;

/**
 * True when the ranges together hold every address of `bits` bits. IPv4 ranges count towards
 * IPv6 as the IPv4-mapped addresses they also trust.
 */
function coversEverything(ranges: ProxyRange[], bits: 32 | 128): boolean {
  const spans = ranges
    .filter((range) => bits === 128 || range.family === 4)
    .map((range) => {
      const lifted = bits === 128 && range.family === 4;
      const width = BigInt(bits - (lifted ? range.prefix + 96 : range.prefix));
      const start = (((lifted ? IPV4_MAPPED_BASE : 0n) | addressBits(range.network)) >> width) << width;
      return { start, end: start + (1n << width) };
    })
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  let covered = 0n;
  for (const span of spans) {
    if (span.start > covered) {
      return false;
    }
    covered = span.end > covered ? span.end : covered;
  }
  return covered >= 1n << BigInt(bits);
}

/** The widest trusted range allowed, in one sentence: shown in the refusal, README and ADR 0021. */
export const PROXY_WIDTH_RULE =
  'no IPv4 prefix shorter than /8, no IPv6 prefix shorter than /16 (IPv4-mapped IPv6 ranges judged as IPv4), except that private, loopback, link-local and unique-local ranges are always allowed';

/** Ranges a proxy may sit in whatever their width: nothing on the internet at large is inside them. */
const LOCAL_RANGES: ProxyRange[] = [
  { network: '10.0.0.0', prefix: 8, family: 4 },
  { network: '172.16.0.0', prefix: 12, family: 4 },
  { network: '192.168.0.0', prefix: 16, family: 4 },
  { network: '127.0.0.0', prefix: 8, family: 4 },
  { network: '169.254.0.0', prefix: 16, family: 4 },
  { network: '100.64.0.0', prefix: 10, family: 4 },
  { network: '::1', prefix: 128, family: 6 },
  { network: 'fc00::', prefix: 7, family: 6 },
  { network: 'fe80::', prefix: 10, family: 6 },
];

/** True when every address of `range` is inside `outer` (same family). */
function liesWithin(range: ProxyRange, outer: ProxyRange): boolean {
  if (range.family !== outer.family || range.prefix < outer.prefix) {
    return false;
  }
  const shift = BigInt((range.family === 4 ? 32 : 128) - outer.prefix);
  return addressBits(range.network) >> shift === addressBits(outer.network) >> shift;
}

/** PROXY_WIDTH_RULE for one range (IPv4-mapped ranges arrive here already as IPv4). */
function withinWidthRule(range: ProxyRange): boolean {
  return range.prefix >= (range.family === 4 ? 8 : 16) || LOCAL_RANGES.some((local) => liesWithin(range, local));
}

/**
 * Parses APP_TRUSTED_PROXIES: comma-separated `<network>/<prefix>` ranges, a single address
 * meaning /32 or /128. Throws naming the entry for anything else, for any /0 or list of
 * ranges that together hold every IPv4 or every IPv6 address (trusting every address would let
 * any client choose its own address), and for any range wider than PROXY_WIDTH_RULE allows
 * (nearly every address is no better).
 */
export function parseTrustedProxies(value: string): ProxyRange[] {
  if (value.trim() === '') {
    return [];
  }
  const ranges = value.split(',').map((raw): ProxyRange => {
    const entry = raw.trim();
    const match = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(entry);
    const address = match ? normaliseAddress(match[1]!) : undefined;
    if (!match || !address || match[1]!.includes('%')) {
      throw new Error(`"${entry}" is not an address or <network>/<prefix> range`);
    }
    const family = address.includes(':') ? 6 : 4;
    const written = match[2] === undefined ? (isIPv4(match[1]!) ? 32 : 128) : Number(match[2]);
    // An IPv4-mapped IPv6 range is the IPv4 range 96 bits further in; anything wider is no range of clients.
    const mapped = family === 4 && !isIPv4(match[1]!);
    const prefix = mapped ? written - 96 : written;
    const bits = family === 4 ? 32 : 128;
    if (prefix < 0 || prefix > bits) {
      throw new Error(`"${entry}" has a prefix outside 1-${mapped ? 128 : bits}`);
    }
    if (prefix === 0) {
      throw new Error(`"${entry}" would trust every address`);
    }
    return { network: address, prefix, family };
  });
  if (coversEverything(ranges, 32) || coversEverything(ranges, 128)) {
    throw new Error(`"${value.trim()}" would trust every address`);
  }
  const tooWide = ranges.findIndex((range) => !withinWidthRule(range));
  if (tooWide >= 0) {
    throw new Error(`"${value.split(',')[tooWide]!.trim()}" would trust nearly every client (${PROXY_WIDTH_RULE})`);
  }
  return ranges;
}

export interface ClientAddressResolver {
  /** The client behind `peer`: read from X-Forwarded-For only when `peer` is a trusted proxy. */
  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string;
  isTrusted(address: string): boolean;
  /** True when the socket peer itself (as Node gives it, not yet canonical) is a trusted proxy. */
  isTrustedPeer(peer: string | undefined): boolean;
}

/** A dotted IPv4 address (already validated) as a 32-bit number, read without allocating. */
function ipv4Number(address: string): number {
  let value = 0;
  let octet = 0;
  for (let index = 0; index < address.length; index += 1) {
    const code = address.charCodeAt(index);
    if (code === 46) {
      value = (value << 8) | octet;
      octet = 0;
    } else {
      octet = octet * 10 + (code - 48);
    }
  }
  return ((value << 8) | octet) >>> 0;
}

/** `[v6]`, `[v6]:port`, `v4:port` or a bare address, as proxies write hops. */
function parseHop(hop: string): string | undefined {
  const text = hop.trim();
  if (isIPv4(text)) {
    return text;
  }
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) {
    return normaliseAddress(bracketed[1]!);
  }
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return normaliseAddress(withPort ? withPort[1]! : text);
}

/**
 * Walks X-Forwarded-For from the right (the hop the trusted peer itself added) past trusted
 * proxies to the first untrusted address. A malformed hop ends the walk with the peer's own
 * address, and so does a chain of trusted hops only.
 */
export function createClientAddressResolver(ranges: ProxyRange[]): ClientAddressResolver {
  // IPv4 ranges as integer masks: checking a hop is then a few operations, not an object per call.
  const ipv4 = ranges
    .filter((range) => range.family === 4)
    .map((range) => {
      const mask = range.prefix === 32 ? 0xffffffff : ~(0xffffffff >>> range.prefix) >>> 0;
      return { mask, network: (ipv4Number(range.network) & mask) >>> 0 };
    });
  const ipv6 = new BlockList();
  for (const range of ranges.filter((r) => r.family === 6)) {
    ipv6.addSubnet(range.network, range.prefix, 'ipv6');
  }
  const hasIpv6 = ranges.some((range) => range.family === 6);
  const isTrusted = (address: string) => {
    if (!address.includes(':')) {
      const value = ipv4Number(address);
      return ipv4.some((range) => (value & range.mask) >>> 0 === range.network);
    }
    return hasIpv6 && ipv6.check(address, 'ipv6');
  };
  // Requests arrive from few peers (the proxies, or clients over keep-alive connections): each
  // one's canonical form and trust are remembered rather than worked out per request.
  const peers = new Map<string, { client: string; trusted: boolean }>();
  const peerOf = (peer: string) => {
    let known = peers.get(peer);
    if (!known) {
      const client = normaliseAddress(peer) ?? '';
      known = { client, trusted: client !== '' && isTrusted(client) };
      if (peers.size >= MAX_REMEMBERED_PEERS) {
        peers.clear();
      }
      peers.set(peer, known);
    }
    return known;
  };
  return {
    isTrusted,
    isTrustedPeer: (peer) => peerOf(peer ?? '').trusted,
    resolve(peer, forwardedFor) {
      const { client, trusted } = peerOf(peer ?? '');
      if (!forwardedFor || !trusted) {
        return client;
      }
      const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
      for (let index = hops.length - 1; index >= 0; index -= 1) {
        const hop = parseHop(hops[index]!);
        if (!hop) {
          return client;
        }
        if (!isTrusted(hop)) {
          return hop;
        }
      }
      return client;
    },
  };
}
