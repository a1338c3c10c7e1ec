import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import type { SubjectAltName } from './extensions.js';
import { assertCertificateNames, lintCertificateNames, type NameProblemCode } from './name-lint.js';

const dns = (value: string): SubjectAltName => ({ type: 'dns', value });
const codesOf = (san: SubjectAltName, allowIp = false): NameProblemCode[] =>
  lintCertificateNames({ sans: [san], allowIp }).problems.map((p) => p.code);

describe('name lint: DNS names', () => {
  it.each([
    ['example.com'],
    ['www.example.com'],
    ['*.example.com'],
    ['*.example.co.uk'],
    ['a-b.example.com'],
    ['xn--bcher-kva.de'],
    ['bücher.de'],
    ['*.bücher.de'],
    ['EXAMPLE.COM'],
    ['localhost'],
    ['host.internal'],
    ['svc.cluster.local'],
    [`${'a'.repeat(63)}.example.com`],
    [`${Array.from({ length: 4 }, () => 'a'.repeat(61)).join('.')}.io`],
    ['пример.рф'],
    ['παράδειγμα.ελ'],
  ])('accepts %s', (name) => {
    expect(codesOf(dns(name))).toEqual([]);
  });

  it.each<[string, NameProblemCode]>([
    ['', 'syntax'],
    ['example.com.', 'syntax'],
    ['example..com', 'syntax'],
    ['.example.com', 'syntax'],
    ['-example.com', 'syntax'],
    ['example-.com', 'syntax'],
    ['ex_ample.com', 'syntax'],
    ['exa mple.com', 'syntax'],
    ['ab--c.example.com', 'syntax'],
    [`${'a'.repeat(64)}.example.com`, 'too_long'],
    [`${Array.from({ length: 5 }, () => 'a'.repeat(61)).join('.')}.io`, 'too_long'],
    ['xn--zz.example.com', 'idna'],
    ['xn--a.example.com', 'idna'],
    ['аpple.com', 'mixed_script'], // Cyrillic а + Latin pple
    ['xn--pple-43d.com', 'mixed_script'], // the same, as an A-label
    ['pαypal.com', 'mixed_script'], // Greek alpha
    ['*', 'wildcard_position'],
    ['*.com', 'wildcard_public_suffix'],
    ['*.co.uk', 'wildcard_public_suffix'],
    ['*.github.io', 'wildcard_public_suffix'],
    ['com', 'public_suffix'],
    ['co.uk', 'public_suffix'],
    ['www.*.example.com', 'wildcard_position'],
    ['*.*.example.com', 'wildcard_position'],
    ['f*.example.com', 'wildcard_position'],
    ['*example.com', 'wildcard_position'],
    ['192.0.2.1', 'ip_not_allowed'],
    ['exam\u0000ple.com', 'control_character'],
    ['example.com\n', 'control_character'],
    ['exa\u200bmple.com', 'control_character'],
    ['exa\u202emple.com', 'bidi_control'],
    ['\u2067example.com', 'bidi_control'],
  ])('refuses %j with %s', (name, code) => {
    expect(codesOf(dns(name))).toContain(code);
  });
});

describe('name lint: IP addresses, other SANs, the common name', () => {
  it('allows IP SANs only when the rules do, and refuses what is not an address', () => {
    expect(codesOf({ type: 'ip', value: '192.0.2.1' })).toEqual(['ip_not_allowed']);
    expect(codesOf({ type: 'ip', value: '2001:db8::1' }, true)).toEqual([]);
    expect(codesOf({ type: 'ip', value: '192.0.2.300' }, true)).toEqual(['ip_invalid']);
  });

  it('checks e-mail and URI SANs for control and bidi characters', () => {
    expect(codesOf({ type: 'email', value: 'ops@example.com' })).toEqual([]);
    expect(codesOf({ type: 'email', value: 'ops\u202e@example.com' })).toEqual(['bidi_control']);
    expect(codesOf({ type: 'uri', value: 'https://example.com/\u0000' })).toEqual(['control_character']);
  });

  it('refuses a common name that is not a SAN, or adds it, per the rule', () => {
    const refused = lintCertificateNames({ commonName: 'other.example.com', sans: [dns('www.example.com')] });
    expect(refused.problems).toEqual([
      expect.objectContaining({ field: 'common_name', code: 'cn_not_in_sans' }),
    ]);
    const added = lintCertificateNames({
      commonName: 'other.example.com',
      sans: [dns('www.example.com')],
      commonNameRule: 'add',
    });
    expect(added).toEqual({ problems: [], sans: [dns('www.example.com'), dns('other.example.com')] });
    // Added names are linted like any SAN.
    const addedBad = lintCertificateNames({ commonName: '*.com', sans: [], commonNameRule: 'add' });
    expect(addedBad.problems.map((p) => [p.field, p.code])).toEqual([['sans.0', 'wildcard_public_suffix']]);
    const ipCn = lintCertificateNames({
      commonName: '192.0.2.7',
      sans: [],
      commonNameRule: 'add',
      allowIp: true,
    });
    expect(ipCn).toEqual({ problems: [], sans: [{ type: 'ip', value: '192.0.2.7' }] });
    expect(
      lintCertificateNames({ commonName: 'WWW.example.com', sans: [dns('www.example.com')] }).problems,
    ).toEqual([]);
  });

  it('refuses a common name with a right-to-left override or NUL even when it matches nothing else', () => {
    for (const [cn, code] of [
      ['evil\u202egnp.example.com', 'bidi_control'],
      ['www.example.com\u0000.evil.com', 'control_character'],
    ] as const) {
      const r = lintCertificateNames({ commonName: cn, sans: [dns('www.example.com')] });
      expect(r.problems.map((p) => [p.field, p.code])).toEqual([['common_name', code]]);
    }
  });

  it('reports every problem with its field, and assertCertificateNames throws one name_rejected error', () => {
    const input = {
      commonName: 'a.example.com',
      sans: [dns('a.example.com'), dns('*.com'), { type: 'ip' as const, value: '10.0.0.1' }],
    };
    expect(lintCertificateNames(input).problems.map((p) => [p.field, p.code])).toEqual([
      ['sans.1', 'wildcard_public_suffix'],
      ['sans.2', 'ip_not_allowed'],
    ]);
    try {
      assertCertificateNames(input);
      expect.unreachable();
    } catch (e) {
      expect(isCertwrightError(e) && [e.code, e.reason, e.fields.map((f) => f.field)]).toEqual([
        'validation_failed',
        'name_rejected',
        ['sans.1', 'sans.2'],
      ]);
    }
    expect(assertCertificateNames({ commonName: 'a.example.com', sans: [dns('a.example.com')] })).toEqual([
      dns('a.example.com'),
    ]);
  });
});
