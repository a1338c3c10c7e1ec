import { isCertwrightError } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { challengeTypesFor, normalizeIdentifiers } from './identifiers.js';

function reasonOf(fn: () => unknown): string {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return isCertwrightError(error) ? error.reason : 'untyped';
  }
}

describe('ACME order identifiers', () => {
  it('lower-cases DNS names, writes IPv6 canonically and drops duplicates', () => {
    const out = normalizeIdentifiers([
      { type: 'dns', value: 'WWW.Example.COM' },
      { type: 'dns', value: 'www.example.com' },
      { type: 'ip', value: '2001:0db8:0:0:0:0:0:1' },
      { type: 'ip', value: '2001:db8::1' },
      { type: 'ip', value: '192.0.2.7' },
      { type: 'dns', value: '*.example.com' },
    ]);
    expect(out.map((n) => n.identifier)).toEqual([
      { type: 'dns', value: 'www.example.com' },
      { type: 'ip', value: '2001:db8::1' },
      { type: 'ip', value: '192.0.2.7' },
      { type: 'dns', value: '*.example.com' },
    ]);
    expect(out.map((n) => n.wildcard)).toEqual([false, false, false, true]);
  });

  it.each([
    [{ type: 'dns' as const, value: 'com' }, 'name_rejected'],
    [{ type: 'dns' as const, value: '*.co.uk' }, 'name_rejected'],
    [{ type: 'dns' as const, value: 'a.*.example.com' }, 'name_rejected'],
    [{ type: 'dns' as const, value: 'bücher.example' }, 'name_rejected'],
    [{ type: 'dns' as const, value: '192.0.2.1' }, 'name_rejected'],
    [{ type: 'ip' as const, value: '192.0.2.0/24' }, 'malformed'],
    [{ type: 'ip' as const, value: 'fe80::1%eth0' }, 'malformed'],
  ])('refuses %j with %s', (identifier, reason) => {
    expect(reasonOf(() => normalizeIdentifiers([identifier]))).toBe(reason);
  });

  it('offers only dns-01 for a wildcard and never dns-01 for an IP address', () => {
    const [wild, ip, name] = normalizeIdentifiers([
      { type: 'dns', value: '*.example.com' },
      { type: 'ip', value: '192.0.2.7' },
      { type: 'dns', value: 'example.com' },
    ]);
    const all = ['http-01', 'dns-01', 'tls-alpn-01'] as const;
    expect(challengeTypesFor(wild!, all)).toEqual(['dns-01']);
    expect(challengeTypesFor(ip!, all)).toEqual(['http-01', 'tls-alpn-01']);
    expect(challengeTypesFor(name!, all)).toEqual([...all]);
    expect(reasonOf(() => challengeTypesFor(wild!, ['http-01']))).toBe('name_not_allowed');
    expect(reasonOf(() => challengeTypesFor(ip!, ['dns-01']))).toBe('name_not_allowed');
  });
});
