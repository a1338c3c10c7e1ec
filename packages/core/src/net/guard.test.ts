import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { AddressCategory } from './address-ranges.js';
import { parseAllowlist } from './allowlist.js';
import { createOutboundClient } from './client.js';
import { type AddressGuardOptions, createAddressGuard } from './guard.js';
import { type Resolver, staticResolver } from './resolver.js';

/** Names of the hostile table; no real DNS is ever asked. */
const NAMES: Record<string, string | string[]> = {
  'loop.test': '127.0.0.1',
  'loop-high.test': '127.255.255.254',
  localhost: '127.0.0.1',
  'meta.test': '169.254.169.254',
  'ecs.test': '169.254.170.2',
  'linklocal.test': '169.254.1.1',
  'ten.test': '10.0.0.1',
  'ten-top.test': '10.255.255.255',
  'p172.test': '172.16.0.1',
  'p172-top.test': '172.31.255.255',
  'p192.test': '192.168.1.1',
  'cgnat.test': '100.64.0.1',
  'alibaba.test': '100.100.100.200',
  'oracle.test': '192.0.0.192',
  'azure-host.test': '168.63.129.16',
  'zero.test': '0.0.0.0',
  'zero-net.test': '0.1.2.3',
  'broadcast.test': '255.255.255.255',
  'multicast.test': '224.0.0.1',
  'ssdp.test': '239.255.255.250',
  'future.test': '240.0.0.1',
  'bench.test': '198.18.0.1',
  'doc1.test': '192.0.2.1',
  'doc2.test': '198.51.100.7',
  'doc3.test': '203.0.113.9',
  'ietf.test': '192.0.0.8',
  'v6-loop.test': '::1',
  'v6-zero.test': '::',
  'mapped.test': '::ffff:127.0.0.1',
  'mapped-meta.test': '::ffff:169.254.169.254',
  'mapped-ten.test': '::ffff:10.1.2.3',
  'mapped-hex.test': '::ffff:7f00:1',
  'compat.test': '::127.0.0.1',
  'compat-ten.test': '::a00:1',
  'translated.test': '::ffff:0:7f00:1',
  'nat64.test': '64:ff9b::7f00:1',
  'nat64-meta.test': '64:ff9b::a9fe:a9fe',
  'nat64-local.test': '64:ff9b:1::1',
  '6to4.test': '2002:7f00:1::',
  '6to4-ten.test': '2002:a00:1::1',
  // Teredo client 127.0.0.1, stored inverted (0x80ff 0xfffe).
  'teredo.test': '2001:0:4136:e378:8000:63bf:80ff:fffe',
  'ula.test': 'fd12:3456::1',
  'ula-fc.test': 'fc00::1',
  'aws-v6.test': 'fd00:ec2::254',
  'v6-linklocal.test': 'fe80::1',
  'v6-multicast.test': 'ff02::1',
  'v6-doc.test': '2001:db8::1',
  'v6-doc2.test': '3fff::1',
  'v6-bench.test': '2001:2::1',
  'site-local.test': 'fec0::1',
  'discard.test': '100::1',
  'orchid.test': '2001:20::1',
  'unallocated-v6.test': '4000::1',
  'mixed.test': ['8.8.8.8', '10.0.0.1'],
  'mixed-v6.test': ['2606:4700::1111', '::1'],
  'public.test': '8.8.8.8',
  'public-v6.test': '2606:4700::1111',
  'empty.test': [],
  'garbage.test': ['not-an-address'],
};

const table = staticResolver(NAMES);

function guard(options: AddressGuardOptions = {}) {
  return createAddressGuard({ resolve: table, ...options });
}

/** Resolves through the guard and returns the refusal's reason and category, or the addresses. */
async function outcome(host: string, options: AddressGuardOptions = {}) {
  try {
    const checked = await guard(options).resolve(host);
    return { admitted: checked.addresses };
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
    return { reason: error.reason, category: error.extra.category as AddressCategory | undefined };
  }
}

const HOSTILE: [host: string, category: AddressCategory][] = [
  // Names resolving to refused space.
  ['loop.test', 'loopback'],
  ['loop-high.test', 'loopback'],
  ['localhost', 'loopback'],
  ['LOOP.TEST.', 'loopback'],
  ['meta.test', 'metadata'],
  ['ecs.test', 'metadata'],
  ['linklocal.test', 'link_local'],
  ['ten.test', 'private'],
  ['ten-top.test', 'private'],
  ['p172.test', 'private'],
  ['p172-top.test', 'private'],
  ['p192.test', 'private'],
  ['cgnat.test', 'private'],
  ['alibaba.test', 'metadata'],
  ['oracle.test', 'metadata'],
  ['azure-host.test', 'metadata'],
  ['zero.test', 'unspecified'],
  ['zero-net.test', 'unspecified'],
  ['broadcast.test', 'broadcast'],
  ['multicast.test', 'multicast'],
  ['ssdp.test', 'multicast'],
  ['future.test', 'reserved'],
  ['bench.test', 'benchmarking'],
  ['doc1.test', 'documentation'],
  ['doc2.test', 'documentation'],
  ['doc3.test', 'documentation'],
  ['ietf.test', 'reserved'],
  ['v6-loop.test', 'loopback'],
  ['v6-zero.test', 'unspecified'],
  ['mapped.test', 'loopback'],
  ['mapped-meta.test', 'metadata'],
  ['mapped-ten.test', 'private'],
  ['mapped-hex.test', 'loopback'],
  ['compat.test', 'loopback'],
  ['compat-ten.test', 'private'],
  ['translated.test', 'loopback'],
  ['nat64.test', 'loopback'],
  ['nat64-meta.test', 'metadata'],
  ['nat64-local.test', 'reserved'],
  ['6to4.test', 'loopback'],
  ['6to4-ten.test', 'private'],
  ['teredo.test', 'loopback'],
  ['ula.test', 'private'],
  ['ula-fc.test', 'private'],
  ['aws-v6.test', 'metadata'],
  ['v6-linklocal.test', 'link_local'],
  ['v6-multicast.test', 'multicast'],
  ['v6-doc.test', 'documentation'],
  ['v6-doc2.test', 'documentation'],
  ['v6-bench.test', 'benchmarking'],
  ['site-local.test', 'reserved'],
  ['discard.test', 'reserved'],
  ['orchid.test', 'reserved'],
  ['unallocated-v6.test', 'reserved'],
  // One refused address refuses the name, whatever else it resolves to.
  ['mixed.test', 'private'],
  ['mixed-v6.test', 'loopback'],
  // Address literals in every form a URL or getaddrinfo accepts: judged without a lookup.
  ['127.0.0.1', 'loopback'],
  ['2130706433', 'loopback'],
  ['017700000001', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0', 'unspecified'],
  ['0.0.0.0', 'unspecified'],
  ['[::]', 'unspecified'],
  ['[::1]', 'loopback'],
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
  ['[fe80::1%25eth0]', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['[FE80::1]', 'link_local'],
  ['169.254.169.254', 'metadata'],
  ['2852039166', 'metadata'],
  ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
  ['10.1', 'private'],
  ['0xa000001', 'private'],
  ['[64:ff9b::7f00:1]', 'loopback'],
  ['[64:ff9b::169.254.169.254]', 'metadata'],
  ['[2002:7f00:1::]', 'loopback'],
  ['100.100.100.200', 'metadata'],
  ['[fd00:ec2::254]', 'metadata'],
];

describe('outbound address guard: hostile destinations', () => {
  it('holds more than 60 hostile cases', () => {
    expect(HOSTILE.length).toBeGreaterThan(60);
  });

  it.each(HOSTILE)('refuses %s (%s)', async (host, category) => {
    expect(await outcome(host)).toEqual({ reason: 'address_refused', category });
  });

  it('judges address literals without asking the resolver', async () => {
    const never: Resolver = async (name) => {
      throw new Error(`resolver asked for ${name}`);
    };
    for (const [host, category] of HOSTILE.filter(
      ([h]) => !h.endsWith('.test') && h !== 'localhost' && !h.endsWith('.'),
    )) {
      const refused = await createAddressGuard({ resolve: never })
        .resolve(host)
        .catch((e: unknown) => e);
      expect(isCertwrightError(refused) && refused.extra.category, host).toBe(category);
    }
  });

  it.each([
    'good@127.0.0.1',
    '127.0.0.1:80',
    '1.2.3.4.5',
    '0x100000000',
    '1.2.3.08',
    'a b',
    '',
    'evil.test/x',
    'evil.test#x',
    'evil.test?x',
    'evil.test\\x',
    'evil..test',
    '[not-v6]',
    'x'.repeat(300),
  ])('refuses the host text %j as invalid input', async (host) => {
    expect(await outcome(host)).toMatchObject({ reason: 'invalid_input' });
  });

  it.each(['unknown.test', 'empty.test', 'garbage.test'])('reports %s as a DNS failure', async (host) => {
    expect(await outcome(host)).toMatchObject({ reason: 'dns_failed' });
  });

  it('says a private target resolves to a private IP and private networks are not allowed, without the address', async () => {
    const error = await guard()
      .resolve('ten.test', 'url')
      .catch((e: unknown) => e);
    expect(isCertwrightError(error)).toBe(true);
    if (!isCertwrightError(error)) return;
    expect(error.code).toBe('validation_failed');
    expect(error.message).toMatch(/resolves to a private IP and private networks are not allowed/);
    expect(error.message).not.toContain('10.0.0.1');
    expect(error.fields[0]?.field).toBe('url');
  });

  it('admits public addresses and keeps the resolver order', async () => {
    expect(await outcome('public.test')).toEqual({ admitted: ['8.8.8.8'] });
    expect(await outcome('public-v6.test')).toEqual({ admitted: ['2606:4700::1111'] });
    expect(await outcome('8.8.8.8')).toEqual({ admitted: ['8.8.8.8'] });
    // A mapped or compatible public address is connected as its IPv4 address; NAT64 stays IPv6.
    expect(await outcome('[::ffff:8.8.8.8]')).toEqual({ admitted: ['8.8.8.8'] });
    expect(await outcome('[64:ff9b::808:808]')).toEqual({ admitted: ['64:ff9b::808:808'] });
  });
});

describe('outbound address guard: allowlist and opt-ins', () => {
  const allowlist = parseAllowlist('10.0.0.0/8, 192.168.1.20 ,fd00::/8, 100.64.0.0/10, 169.254.0.0/16');

  it.each([
    ['ten.test', ['10.0.0.1']],
    ['mapped-ten.test', ['10.1.2.3']],
    ['6to4-ten.test', ['2002:a00:1::1']],
    ['192.168.1.20', ['192.168.1.20']],
    ['ula.test', ['fd12:3456::1']],
    ['cgnat.test', ['100.64.0.1']],
  ])('admits the listed private destination %s', async (host, addresses) => {
    expect(await outcome(host, { allowlist })).toEqual({ admitted: addresses });
  });

  it.each([
    ['192.168.1.21', 'private'],
    ['p172.test', 'private'],
    ['meta.test', 'metadata'],
    ['linklocal.test', 'link_local'],
    ['alibaba.test', 'metadata'],
    ['aws-v6.test', 'metadata'],
    ['loop.test', 'loopback'],
    ['v6-linklocal.test', 'link_local'],
  ])('still refuses %s (%s) with that allowlist', async (host, category) => {
    expect(await outcome(host, { allowlist })).toEqual({ reason: 'address_refused', category });
  });

  it('admits loopback only with the loopback opt-in and an entry inside loopback', async () => {
    const listed = parseAllowlist('127.0.0.1');
    expect(listed.loopbackEntries).toEqual(['127.0.0.1/32']);
    expect(await outcome('loop.test', { allowlist: listed })).toMatchObject({ category: 'loopback' });
    expect(await outcome('loop.test', { allowlist: listed, loopback: 'when-listed' })).toEqual({
      admitted: ['127.0.0.1'],
    });
    expect(await outcome('mapped.test', { allowlist: listed, loopback: 'when-listed' })).toEqual({
      admitted: ['127.0.0.1'],
    });
    expect(await outcome('127.0.0.2', { allowlist: listed, loopback: 'when-listed' })).toMatchObject({
      category: 'loopback',
    });
    expect(await outcome('v6-loop.test', { allowlist: listed, loopback: 'when-listed' })).toMatchObject({
      category: 'loopback',
    });
    const everything = parseAllowlist('0.0.0.0/0, ::/0');
    expect(everything.loopbackEntries).toEqual([]);
    expect(await outcome('loop.test', { allowlist: everything, loopback: 'when-listed' })).toMatchObject({
      category: 'loopback',
    });
    const wide = parseAllowlist('127.0.0.0/8, ::1, 169.254.169.254');
    for (const host of ['meta.test', 'linklocal.test', 'zero.test']) {
      expect(await outcome(host, { allowlist: wide, loopback: 'when-listed' }), host).toMatchObject({
        reason: 'address_refused',
      });
    }
    expect(await outcome('v6-loop.test', { allowlist: wide, loopback: 'when-listed' })).toEqual({
      admitted: ['::1'],
    });
  });

  it('admits public and private destinations an administrator configured, and no special range', async () => {
    const operatorConfigured = true;
    for (const host of ['public.test', 'public-v6.test', 'ten.test', 'p172.test', 'cgnat.test', 'ula.test']) {
      expect(await outcome(host, { operatorConfigured }), host).toHaveProperty('admitted');
    }
    const refused: [string, AddressCategory][] = [
      ['loop.test', 'loopback'],
      ['v6-loop.test', 'loopback'],
      ['mapped.test', 'loopback'],
      ['linklocal.test', 'link_local'],
      ['v6-linklocal.test', 'link_local'],
      ['doc1.test', 'documentation'],
      ['doc2.test', 'documentation'],
      ['doc3.test', 'documentation'],
      ['v6-doc.test', 'documentation'],
      ['bench.test', 'benchmarking'],
      ['v6-bench.test', 'benchmarking'],
      ['ietf.test', 'reserved'],
      ['future.test', 'reserved'],
      ['site-local.test', 'reserved'],
      ['meta.test', 'metadata'],
      ['alibaba.test', 'metadata'],
      ['aws-v6.test', 'metadata'],
      ['mapped-meta.test', 'metadata'],
      ['nat64-meta.test', 'metadata'],
      ['zero.test', 'unspecified'],
      ['multicast.test', 'multicast'],
    ];
    for (const [host, category] of refused) {
      expect(await outcome(host, { operatorConfigured }), host).toEqual({
        reason: 'address_refused',
        category,
      });
    }
    // Loopback only with the code-level opt-in and a loopback allowlist entry (test rigs).
    const loopback = {
      operatorConfigured,
      loopback: 'when-listed',
      allowlist: parseAllowlist('127.0.0.1'),
    } as const;
    expect(await outcome('loop.test', loopback)).toEqual({ admitted: ['127.0.0.1'] });
    expect(await outcome('linklocal.test', loopback)).toMatchObject({ category: 'link_local' });
  });

  it('check() judges single literals', () => {
    const g = createAddressGuard({ allowlist });
    expect(g.check('10.9.9.9')).toMatchObject({ admitted: true, category: 'private' });
    expect(g.check('::ffff:a9fe:a9fe')).toMatchObject({
      admitted: false,
      category: 'metadata',
      embeddedIPv4: '169.254.169.254',
    });
    expect(g.check('nonsense')).toMatchObject({ admitted: false });
  });
});

describe('allowlist setting', () => {
  it('reads CIDRs and single addresses, clears host bits, ignores empty pieces', () => {
    const list = parseAllowlist(' 10.1.2.3/8,, 192.168.0.5 , FD00::/8, ::ffff:172.16.0.0/108,');
    expect(list.entries).toEqual(['10.0.0.0/8', '192.168.0.5/32', 'fd00::/8', '172.16.0.0/12']);
    expect(list.toString()).toBe('10.0.0.0/8, 192.168.0.5/32, fd00::/8, 172.16.0.0/12');
    expect(parseAllowlist('').entries).toEqual([]);
    expect(parseAllowlist(['10.0.0.0/8', '::1']).entries).toEqual(['10.0.0.0/8', '::1/128']);
  });

  it.each([
    '10.0.0.0/33',
    '10.1',
    '0x0a.0.0.1',
    'fe80::1%eth0',
    'example.com',
    '10.0.0.0/8/8',
    '10.0.0.0/-1',
    '10.0.0.0/ 8',
  ])('refuses the whole setting for the bad entry %j, naming it', (bad) => {
    let error: unknown;
    try {
      parseAllowlist(`10.0.0.0/8, ${bad}, 192.168.0.0/16`, 'webhook_allowed_private_ranges');
    } catch (e) {
      error = e;
    }
    expect(isCertwrightError(error) && error.reason).toBe('invalid_input');
    if (!isCertwrightError(error)) return;
    expect(error.message).toContain(`'${bad.trim()}'`);
    expect(error.fields[0]?.field).toBe('webhook_allowed_private_ranges');
  });
});

describe('DNS rebinding', () => {
  it('looks a name up once: a second answer that differs can never be used', async () => {
    let calls = 0;
    const flipping: Resolver = async () => (++calls === 1 ? ['8.8.8.8'] : ['127.0.0.1']);
    const g = createAddressGuard({ resolve: flipping });
    const checked = await g.resolve('rebind.test');
    expect(checked.addresses).toEqual(['8.8.8.8']);
    expect(calls).toBe(1);
  });
});

describe('URL vetting', () => {
  const client = createOutboundClient({ resolve: table });

  it.each([
    ['http://good@127.0.0.1/', 'invalid_input'],
    ['http://user:pass@public.test/', 'invalid_input'],
    ['http://127.0.0.1:80@public.test/', 'invalid_input'],
    ['ftp://public.test/', 'invalid_input'],
    ['file:///etc/passwd', 'invalid_input'],
    ['gopher://public.test:70/', 'invalid_input'],
    ['not a url', 'invalid_input'],
    ['http://[::ffff:127.0.0.1]/', 'address_refused'],
    ['http://0x7f.1/', 'address_refused'],
    ['https://2130706433:8443/x', 'address_refused'],
    ['http://meta.test/latest/meta-data/', 'address_refused'],
    ['http://LOOP.TEST./', 'address_refused'],
    ['http://unknown.test/', 'dns_failed'],
  ])('refuses %s with %s', async (url, reason) => {
    const error = await client.checkUrl(url).catch((e: unknown) => e);
    expect(isCertwrightError(error) && error.reason).toBe(reason);
    if (isCertwrightError(error) && error.fields.length > 0) expect(error.fields[0]?.field).toBe('url');
  });

  it('accepts a public URL and returns the checked addresses', async () => {
    const { url, host } = await client.checkUrl('https://PUBLIC.test./hook?x=1');
    expect(url.href).toBe('https://public.test./hook?x=1');
    expect(host).toMatchObject({ host: 'public.test', literal: false, addresses: ['8.8.8.8'] });
  });
});
