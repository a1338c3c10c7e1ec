import { isCertwrightError } from '@certwright/core';
import { parseAddress } from '@certwright/core/net';
import { describe, expect, it } from 'vitest';
import { withinBudget } from './budget.js';
import { vetChallenge } from './challenge.js';
import { http01Url } from './http-01.js';
import { dns01TxtValue } from './key-authorization.js';
import { reverseDnsName } from './reverse-name.js';
import { shown } from './shown.js';
import type { ChallengeToValidate } from './types.js';

const base: ChallengeToValidate = {
  type: 'http-01',
  identifier: { type: 'dns', value: 'Example.COM.' },
  token: 'evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA',
  keyAuthorization: 'evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA.nP1qzpXGymHBrUEepNY9HCsQk7K8KhOypzEt62jcerQ',
};

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return isCertwrightError(error) ? error.reason : 'untyped';
  }
};

describe('challenge vetting', () => {
  it('normalizes a dns identifier (lower case, no trailing dot) and builds the RFC 8555 §8.3 URL', () => {
    const vetted = vetChallenge(base);
    expect(vetted.subject).toEqual({ type: 'dns', name: 'example.com', wildcard: false });
    expect(http01Url(vetted, 80)).toBe(`http://example.com/.well-known/acme-challenge/${base.token}`);
    expect(http01Url(vetted, 5002)).toBe(`http://example.com:5002/.well-known/acme-challenge/${base.token}`);
  });

  it('brackets an IPv6 identifier in the URL', () => {
    const vetted = vetChallenge({ ...base, identifier: { type: 'ip', value: '2001:DB8:0:0::1' } });
    expect(http01Url(vetted, 80)).toBe(`http://[2001:db8::1]/.well-known/acme-challenge/${base.token}`);
  });

  it.each([
    ['a token that is not base64url', { token: '../../etc', keyAuthorization: '../../etc.abc' }],
    [
      'a key authorization for another token',
      { keyAuthorization: 'other.nP1qzpXGymHBrUEepNY9HCsQk7K8KhOypzEt62jcerQ' },
    ],
    ['a key authorization without a thumbprint', { keyAuthorization: `${base.token}.` }],
    ['an unknown type', { type: 'http-02' }],
    ['a wildcard for http-01', { identifier: { type: 'dns', value: '*.example.com' } }],
    [
      'a wildcard for tls-alpn-01',
      { type: 'tls-alpn-01', identifier: { type: 'dns', value: '*.example.com' } },
    ],
    ['dns-01 for an IP identifier', { type: 'dns-01', identifier: { type: 'ip', value: '192.0.2.1' } }],
    ['an address as a dns identifier', { identifier: { type: 'dns', value: '2130706433' } }],
    ['a name as an ip identifier', { identifier: { type: 'ip', value: 'example.com' } }],
    ['a host with a path in it', { identifier: { type: 'dns', value: 'example.com/x' } }],
  ])('refuses %s with invalid_input', (_, change) => {
    expect(reasonOf(() => vetChallenge({ ...base, ...change } as ChallengeToValidate))).toBe('invalid_input');
  });

  it('keeps a wildcard for dns-01, validated at the base name', () => {
    const vetted = vetChallenge({
      ...base,
      type: 'dns-01',
      identifier: { type: 'dns', value: '*.Example.com' },
    });
    expect(vetted.subject).toEqual({ type: 'dns', name: 'example.com', wildcard: true });
  });
});

describe('challenge values', () => {
  it('computes the dns-01 TXT value as base64url(SHA-256(key authorization)) without padding', () => {
    // SHA-256('abc') from FIPS 180-2, base64url.
    expect(dns01TxtValue('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });

  it('names an address by its reverse mapping (RFC 8738 §6; RFC 3596 §2.5 example)', () => {
    expect(reverseDnsName(parseAddress('192.0.2.10')!)).toBe('10.2.0.192.in-addr.arpa');
    expect(reverseDnsName(parseAddress('4321:0:1:2:3:4:567:89ab')!)).toBe(
      'b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa',
    );
  });

  it('shows untrusted text escaped and cut, so it cannot forge log lines or bloat a problem document', () => {
    expect(shown('ok\r\nforged: yes\\')).toBe('ok\\x0d\\x0aforged: yes\\\\');
    expect(shown('é☃')).toBe('\\xe9\\u{2603}');
    expect(shown('x'.repeat(500), 10)).toBe(`${'x'.repeat(10)}…`);
  });
});

describe('the validation budget', () => {
  it('rejects with timed_out at the deadline and cancels what is in flight', async () => {
    let cancelled = false;
    const result = withinBudget(20, undefined, 'the test validation', (budget) => {
      budget.onAbandon(() => {
        cancelled = true;
      });
      return new Promise<void>(() => {});
    });
    await expect(result).rejects.toMatchObject({ reason: 'timed_out' });
    expect(cancelled).toBe(true);
  });

  it('rejects with timed_out without starting when the signal was already aborted', async () => {
    let started = false;
    const result = withinBudget(10_000, AbortSignal.abort(), 'the test validation', async () => {
      started = true;
    });
    await expect(result).rejects.toMatchObject({ reason: 'timed_out' });
    expect(started).toBe(false);
  });
});
