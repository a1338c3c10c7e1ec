import { describe, expect, it } from 'vitest';
import { clientKey } from './client-address.js';

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
