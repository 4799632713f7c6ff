import { isIPv4, isIPv6 } from 'node:net';

// Client addresses as limits and the audit log store them; the HTTP layer resolves them (platform/http/clientAddress.ts).

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The canonical text of an IP address (IPv6 compressed and lower case, zone dropped, IPv4-mapped
 * IPv6 as plain IPv4), or undefined when it is not one.
 */
export function normaliseAddress(text: string): string | undefined {
  const address = text.trim();
  if (isIPv4(address)) {
    return address;
  }
  const unzoned = address.replace(/%[^%]*$/, '');
  if (!isIPv6(unzoned)) {
    return undefined;
  }
  const canonical = new URL(`http://[${unzoned}]/`).hostname.slice(1, -1);
  const mapped = MAPPED_IPV4.exec(canonical);
  if (mapped) {
    const high = parseInt(mapped[1]!, 16);
    const low = parseInt(mapped[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return canonical;
}

/** The network a client address belongs to for limits: IPv4 as is, IPv6 its /64. */
export function addressNetwork(address: string): string {
  if (!address.includes(':')) {
    return address;
  }
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of a canonical IPv6 address, `::` expanded. */
export function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  return [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
}
