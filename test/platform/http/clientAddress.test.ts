import test from 'ava';
import { addressNetwork, createClientAddressResolver, normaliseAddress, parseTrustedProxies } from '../../../src/platform/http/clientAddress.ts';

test('an empty list trusts nobody', (t) => {
  t.deepEqual(parseTrustedProxies(''), []);
  t.deepEqual(parseTrustedProxies('  '), []);
});

test('ranges and single addresses parse; a single address is /32 or /128', (t) => {
  t.deepEqual(parseTrustedProxies('10.0.0.0/8, 192.168.1.7 ,2001:DB8::/32,::1'), [
    { network: '10.0.0.0', prefix: 8, family: 4 },
    { network: '192.168.1.7', prefix: 32, family: 4 },
    { network: '2001:db8::', prefix: 32, family: 6 },
    { network: '::1', prefix: 128, family: 6 },
  ]);
});

test('an IPv4-mapped IPv6 range is the IPv4 range it maps', (t) => {
  t.deepEqual(parseTrustedProxies('::ffff:10.0.0.0/104'), [{ network: '10.0.0.0', prefix: 8, family: 4 }]);
});

for (const entry of [
  '0.0.0.0/0',
  '::/0',
  '10.0.0.0/0',
  '::ffff:0:0/96',
  '::ffff:10.0.0.0/8',
  '10.0.0.0/33',
  '2001:db8::/129',
  '10.0.0.0/',
  '10.0.0.0/8/8',
  '10.0.0.0/-1',
  '10.0.0.0/ 8',
  'proxy.internal',
  '10.0.0.256',
  '10.0.0',
  'fe80::1%eth0',
  '10.0.0.1:80',
  '',
]) {
  test(`"${entry}" in a list is refused`, (t) => {
    t.throws(() => parseTrustedProxies(`127.0.0.1,${entry}`));
  });
}

for (const list of [
  '0.0.0.0/1,128.0.0.0/1',
  '::/1,8000::/1',
  '128.0.0.0/2, 192.0.0.0/2, 0.0.0.0/1',
  '0.0.0.0/1,64.0.0.0/2,128.0.0.0/1',
  '::ffff:0.0.0.0/97,128.0.0.0/1',
  '::/1,8000::/2,c000::/2,10.0.0.1',
]) {
  test(`"${list}" together holds every address and is refused like /0`, (t) => {
    t.throws(() => parseTrustedProxies(list), { message: `"${list}" would trust every address` });
  });
}

test('the same message refuses /0 and a list that holds every address', (t) => {
  t.throws(() => parseTrustedProxies('0.0.0.0/0'), { message: '"0.0.0.0/0" would trust every address' });
});

// Issue 30: each of these leaves a few addresses out yet trusts nearly every client on the internet.
for (const list of [
  '::/1',
  '2000::/3',
  '0.0.0.0/1,128.0.0.0/2,192.0.0.0/3',
  '0.0.0.0/1,128.0.0.0/2',
  '::/1,8000::/2,c000::/3',
  '8.0.0.0/7',
  '10.0.0.0/7',
  '::ffff:0:0/97',
  'fc00::/6',
  '10.0.0.0/8,2001:db8::/15',
]) {
  test(`"${list}" is wider than the rule allows and is refused`, (t) => {
    t.throws(() => parseTrustedProxies(list));
  });
}

for (const list of [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '100.64.0.0/10',
  '::1',
  'fc00::/7',
  'fe80::/10',
  '2001:db8::/32',
  '2001::/16',
  '203.0.113.0/24',
  '8.0.0.0/8',
  '::ffff:10.0.0.0/104',
]) {
  test(`"${list}" is within the rule and is accepted`, (t) => {
    t.is(parseTrustedProxies(list).length, list.split(',').length);
  });
}

test('addresses are normalised: IPv6 compressed and lower case, zone dropped, IPv4-mapped to IPv4', (t) => {
  t.is(normaliseAddress('203.0.113.9'), '203.0.113.9');
  t.is(normaliseAddress('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  t.is(normaliseAddress('fe80::1%eth0'), 'fe80::1');
  t.is(normaliseAddress('::ffff:203.0.113.9'), '203.0.113.9');
  t.is(normaliseAddress('::FFFF:cb00:7109'), '203.0.113.9');
  t.is(normaliseAddress(' 10.1.2.3 '), '10.1.2.3');
  t.is(normaliseAddress('unknown'), undefined);
  t.is(normaliseAddress(''), undefined);
  t.is(normaliseAddress('1.2.3.4.5'), undefined);
});

test('IPv6 addresses are grouped by their /64; IPv4 stays whole', (t) => {
  t.is(addressNetwork('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.is(addressNetwork('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  t.is(addressNetwork('2001:db8::1'), '2001:db8:0:0::/64');
  t.is(addressNetwork('::1'), '0:0:0:0::/64');
  t.is(addressNetwork('203.0.113.9'), '203.0.113.9');
});

const behind = createClientAddressResolver(parseTrustedProxies('10.0.0.0/8, 2001:db8:ff::/48'));
const resolve = (peer: string, forwardedFor?: string | string[]) => behind.resolve(peer, forwardedFor);

test('without trusted proxies the peer is the client, whatever it forwards', (t) => {
  const nobody = createClientAddressResolver([]);
  t.is(nobody.resolve('203.0.113.9', '198.51.100.1'), '203.0.113.9');
  t.is(nobody.resolve('::ffff:203.0.113.9', undefined), '203.0.113.9');
});

test('an untrusted peer is the client; its X-Forwarded-For is ignored', (t) => {
  t.is(resolve('203.0.113.9', '198.51.100.1'), '203.0.113.9');
  t.is(resolve('203.0.113.9', '10.0.0.1'), '203.0.113.9');
});

test('a trusted peer: the right-most hop is the client', (t) => {
  t.is(resolve('10.0.0.2', '198.51.100.1'), '198.51.100.1');
});

test('trusted hops are skipped from the right; a spoofed left part is never reached', (t) => {
  t.is(resolve('10.0.0.2', '1.1.1.1, 198.51.100.1, 10.1.1.1, 10.2.2.2'), '198.51.100.1');
});

test('several X-Forwarded-For lines read as one list', (t) => {
  t.is(resolve('10.0.0.2', ['1.1.1.1, 198.51.100.1', '10.1.1.1']), '198.51.100.1');
});

test('a malformed hop keeps the peer', (t) => {
  t.is(resolve('10.0.0.2', '198.51.100.1, unknown'), '10.0.0.2');
  t.is(resolve('10.0.0.2', '198.51.100.1,,10.1.1.1'), '10.0.0.2');
  t.is(resolve('10.0.0.2', '<script>'), '10.0.0.2');
  t.is(resolve('10.0.0.2', ''), '10.0.0.2');
});

test('a chain of trusted hops only keeps the peer', (t) => {
  t.is(resolve('10.0.0.2', '10.9.9.9, 10.1.1.1'), '10.0.0.2');
});

test('hops with ports, brackets and IPv6 are understood', (t) => {
  t.is(resolve('10.0.0.2', '198.51.100.1:4711'), '198.51.100.1');
  t.is(resolve('10.0.0.2', '[2001:DB8::7]:443'), '2001:db8::7');
  t.is(resolve('10.0.0.2', '[2001:db8::7]'), '2001:db8::7');
  t.is(resolve('10.0.0.2', '2001:db8::7'), '2001:db8::7');
  t.is(resolve('10.0.0.2', '::ffff:198.51.100.1'), '198.51.100.1');
});

test('an IPv6 trusted proxy and an IPv4-mapped peer are recognised', (t) => {
  t.is(resolve('2001:db8:ff:1::9', '198.51.100.1'), '198.51.100.1');
  t.is(resolve('::ffff:10.0.0.2', '198.51.100.1'), '198.51.100.1');
  t.is(resolve('2001:db8:fe::9', '198.51.100.1'), '2001:db8:fe::9');
});

test('a missing peer address resolves to nothing rather than to a forwarded value', (t) => {
  t.is(resolve('', '198.51.100.1'), '');
});
