import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChallengeToValidate,
  type ChallengeValidatorOptions,
  createChallengeValidator,
  dns01TxtValue,
} from '../../src/acme/index.js';
import { keyAuthorization, outcome, rejection } from './fixtures.js';
import { startTxtDnsServer, type TxtDnsServer } from './txt-dns-server.js';

/**
 * dns-01 (RFC 8555 §8.4) against a real DNS server on 127.0.0.1, asked through node:dns with
 * the validator's own server setting — the system resolver never sees these names.
 */

const TOKEN = 'dnsToken_1';
const expected = dns01TxtValue(keyAuthorization(TOKEN));

let dns: TxtDnsServer;

beforeAll(async () => {
  dns = await startTxtDnsServer({
    records: {
      '_acme-challenge.good.acme.test': [['unrelated'], [expected.slice(0, 20), expected.slice(20)]],
      '_acme-challenge.wild.acme.test': [[expected]],
      '_acme-challenge.wrong.acme.test': [[dns01TxtValue(keyAuthorization('otherToken'))], ['v=spf1 -all']],
      '_acme-challenge.empty.acme.test': [],
    },
    servfail: ['_acme-challenge.broken.acme.test'],
    silent: ['_acme-challenge.silent.acme.test'],
  });
});

afterAll(() => dns.close());

const validator = (options: ChallengeValidatorOptions = {}) =>
  createChallengeValidator({ dns01Resolver: dns.address, timeoutMs: 10_000, ...options });

const challenge = (name: string): ChallengeToValidate => ({
  type: 'dns-01',
  identifier: { type: 'dns', value: name },
  token: TOKEN,
  keyAuthorization: keyAuthorization(TOKEN),
});

describe('dns-01 validation', () => {
  it('passes when a TXT record (its strings joined) is base64url(SHA-256(key authorization)), asked of the configured server', async () => {
    await validator()(challenge('good.acme.test'));
    expect(dns.questions).toContain('_acme-challenge.good.acme.test 16');
  });

  it('looks up a wildcard identifier without its "*." label', async () => {
    await validator()(challenge('*.wild.acme.test'));
    expect(dns.questions).toContain('_acme-challenge.wild.acme.test 16');
  });

  it('fails with incorrect_response naming the expected value and the records found', async () => {
    const { reason, message } = await rejection(validator()(challenge('wrong.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain(`expected '${expected}'`);
    expect(message).toContain("'v=spf1 -all'");
  });

  it('fails with incorrect_response when the name does not exist (NXDOMAIN)', async () => {
    const { reason, message } = await rejection(validator()(challenge('absent.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain('no such name');
  });

  it('fails with incorrect_response when the name has no TXT record', async () => {
    const { reason, message } = await rejection(validator()(challenge('empty.acme.test')));
    expect(reason).toBe('incorrect_response');
    expect(message).toContain('no TXT records');
  });

  it('fails with dns_failed when the server answers SERVFAIL', async () => {
    expect(await outcome(validator()(challenge('broken.acme.test')))).toBe('dns_failed');
  });

  it('fails with dns_failed when the configured server cannot be reached', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const closedPort = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    const v = validator({ dns01Resolver: `127.0.0.1:${closedPort}` });
    expect(await outcome(v(challenge('good.acme.test')))).toBe('dns_failed');
  });

  it('fails with timed_out when the server never answers', async () => {
    expect(await outcome(validator({ timeoutMs: 500 })(challenge('silent.acme.test')))).toBe('timed_out');
  });

  it('uses the txtResolver seam instead of any DNS server', async () => {
    const asked: string[] = [];
    const v = validator({
      dns01Resolver: '192.0.2.1:53',
      txtResolver: async (name) => {
        asked.push(name);
        return [[expected]];
      },
    });
    await v(challenge('seam.acme.test'));
    expect(asked).toEqual(['_acme-challenge.seam.acme.test']);
  });

  it('refuses settings it cannot use when created, naming the option', () => {
    expect(() => createChallengeValidator({ dns01Resolver: 'dns.google' })).toThrow(/dns01Resolver/);
    expect(() => createChallengeValidator({ validationResolver: '10.0.0.1:99999' })).toThrow(
      /validationResolver/,
    );
    expect(() => createChallengeValidator({ allowedRanges: ['10.0.0.0/33'] })).toThrow(/allowedRanges/);
    expect(() => createChallengeValidator({ httpPort: 0 })).toThrow(/httpPort/);
  });

  it('refuses dns-01 for an IP identifier (RFC 8738 §7) before any lookup', async () => {
    const before = dns.questions.length;
    const v = validator();
    expect(await outcome(v({ ...challenge('x'), identifier: { type: 'ip', value: '127.0.0.1' } }))).toBe(
      'invalid_input',
    );
    expect(dns.questions.length).toBe(before);
  });
});
