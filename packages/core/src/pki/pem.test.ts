import { describe, expect, it } from 'vitest';
import { pemDecode, pemDecodeAll, pemDecodeCertificates, pemEncode } from './pem.js';

describe('PEM', () => {
  const der = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
  it('encodes 64-column lines and decodes its own output', () => {
    const pem = pemEncode('CERTIFICATE', der);
    expect(pem.split('\n').every((l) => l.length <= 64)).toBe(true);
    expect(pemDecode(pem, 'CERTIFICATE').equals(der)).toBe(true);
    expect(pemDecode(pem.replace(/\n/g, '\r\n'), 'CERTIFICATE').equals(der)).toBe(true);
  });
  it('checks labels and refuses ambiguity', () => {
    const cert = pemEncode('CERTIFICATE', der);
    const key = pemEncode('PRIVATE KEY', der);
    expect(() => pemDecode(key, 'CERTIFICATE')).toThrow(/expected CERTIFICATE, found PRIVATE KEY/);
    expect(() => pemDecode(cert + cert, 'CERTIFICATE')).toThrow(/found 2/);
    expect(() => pemDecode('nothing here', 'CERTIFICATE')).toThrow(/no CERTIFICATE block/);
    expect(() => pemDecodeCertificates(cert + key)).toThrow(/PRIVATE KEY/);
    expect(pemDecodeCertificates(cert + cert)).toHaveLength(2);
    expect(() => pemDecodeAll('-----BEGIN A-----\nAAAA\n-----END B-----')).toThrow(/does not match/);
    expect(() =>
      pemDecode('-----BEGIN CERTIFICATE-----\nA*AA\n-----END CERTIFICATE-----', 'CERTIFICATE'),
    ).toThrow(/base64/);
  });
  it('handles BEGIN lines without END and malformed labels', () => {
    const hostile = '-----BEGIN CERTIFICATE-----\n'.repeat(20_000);
    expect(() => pemDecode(hostile, 'CERTIFICATE')).toThrow(/no CERTIFICATE block/);
    expect(() => pemDecodeAll('-----BEGIN bad label-----\nAAAA\n-----END bad label-----')).toThrow(
      /malformed/,
    );
    const two = pemEncode('X509 CRL', der) + pemEncode('CERTIFICATE', der);
    expect(pemDecodeAll(`junk before\n${two}junk after`).map((b) => b.label)).toEqual([
      'X509 CRL',
      'CERTIFICATE',
    ]);
  });
});
