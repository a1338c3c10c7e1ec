import { parseAllowlist } from '@certwright/core/net';
import { describe, expect, it } from 'vitest';
import { clientKey, trustedProxyClientAddress } from './client-address.js';

describe('clientKey', () => {
  it('keeps an IPv4 address, also when IPv4-mapped', () => {
    expect(clientKey('192.0.2.10')).toBe('192.0.2.10');
    expect(clientKey('::ffff:192.0.2.10')).toBe('192.0.2.10');
    expect(clientKey('::FFFF:c000:20a')).toBe('192.0.2.10');
  });

  it('groups IPv6 addresses by /64, whatever their spelling', () => {
    const key = clientKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(key);
    expect(clientKey('[2001:db8:1:2:3:4:5:6]')).toBe(key);
    expect(clientKey('2001:db8:1:2::7%eth0')).toBe(key);
    expect(clientKey('2001:db8:1:3::1')).not.toBe(key);
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });

  it('keys anything else apart from real addresses, and an empty address as unknown', () => {
    expect(clientKey('')).toBe('unknown');
    expect(clientKey('not-an-address')).toBe('other:not-an-address');
  });
});

describe('trustedProxyClientAddress', () => {
  const resolve = trustedProxyClientAddress(parseAllowlist('10.0.0.0/8, 192.0.2.1'));
  const ask = (peer: string, xff?: string) =>
    resolve(
      new Request('https://localhost/', xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } }),
      { remoteAddress: peer },
    );

  it('believes X-Forwarded-For only from a trusted proxy, taking the rightmost untrusted hop', () => {
    expect(ask('10.1.2.3', '198.51.100.7')).toBe('198.51.100.7');
    expect(ask('10.1.2.3', '203.0.113.9, 198.51.100.7, 10.9.9.9')).toBe('198.51.100.7');
    expect(ask('192.0.2.1', '2001:db8::5')).toBe('2001:db8::5');
  });

  it('keeps the socket address for untrusted peers, missing, malformed or all-proxy headers', () => {
    expect(ask('198.51.100.7', '1.2.3.4')).toBe('198.51.100.7');
    expect(ask('10.1.2.3')).toBe('10.1.2.3');
    expect(ask('10.1.2.3', 'not-an-ip')).toBe('10.1.2.3');
    expect(ask('10.1.2.3', '10.2.2.2, 10.3.3.3')).toBe('10.1.2.3');
    expect(ask('10.1.2.3', `${'1.2.3.4,'.repeat(600)}1.2.3.4`)).toBe('10.1.2.3');
  });
});
