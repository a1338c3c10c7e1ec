import { describe, expect, it } from 'vitest';
import { acmeProblemType, parseProblem, problemToError, retryAfterSeconds } from './problems.js';

const body = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('ACME problems become typed domain failures', () => {
  it('maps each problem family to its reason, keeping the detail out of the message', () => {
    const cases: [string, string, string][] = [
      ['rateLimited', 'rate_limited', 'rate_limited'],
      ['rejectedIdentifier', 'validation_failed', 'name_not_allowed'],
      ['caa', 'validation_failed', 'name_not_allowed'],
      ['unauthorized', 'validation_failed', 'incorrect_response'],
      ['badCSR', 'validation_failed', 'invalid_input'],
      ['externalAccountRequired', 'conflict', 'issuer_not_ready'],
      ['alreadyRevoked', 'conflict', 'already_revoked'],
      ['serverInternal', 'unavailable', 'unavailable'],
    ];
    for (const [type, code, reason] of cases) {
      const problem = parseProblem(
        403,
        body({ type: `urn:ietf:params:acme:error:${type}`, detail: 'secret internal /var/lib/db path' }),
      );
      const error = problemToError(
        problem,
        type === 'unauthorized' ? 'the authorization of a.test' : 'new-order',
        120,
      );
      expect(error, type).toMatchObject({ code, reason });
      expect(error.message).toContain(`with ${type}`);
      expect(error.message).not.toContain('/var/lib');
      expect(acmeProblemType(error)).toBe(type);
      // The detail is kept for the log, on the cause.
      expect(String((error.cause as Error).message)).toContain('/var/lib');
    }
  });

  it('an account refused (unauthorized outside a challenge) is about the issuer, not the names', () => {
    const unauthorized = parseProblem(403, body({ type: 'urn:ietf:params:acme:error:unauthorized' }));
    expect(problemToError(unauthorized, 'new-account')).toMatchObject({ reason: 'issuer_not_ready' });
    expect(problemToError(unauthorized, 'revokeCert')).toMatchObject({ reason: 'issuer_not_ready' });
    expect(problemToError(unauthorized, 'the authorization of a.test')).toMatchObject({
      reason: 'incorrect_response',
    });
  });

  it('a rate limit carries the Retry-After, an hour when the CA gave none', () => {
    expect(
      problemToError(parseProblem(429, body({ type: 'urn:ietf:params:acme:error:rateLimited' })), 'x', 90)
        .extra,
    ).toEqual({
      retry_after_seconds: 90,
    });
    expect(
      problemToError(parseProblem(429, body({ type: 'urn:ietf:params:acme:error:rateLimited' })), 'x').extra,
    ).toEqual({
      retry_after_seconds: 3600,
    });
  });

  it('reads Retry-After as seconds or an HTTP date, and ignores junk', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:02:00 GMT', now)).toBe(120);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(undefined, now)).toBeUndefined();
  });

  it('survives a hostile or broken answer: HTML, huge types, control characters, junk subproblems', () => {
    expect(parseProblem(502, Buffer.from('<html>bad gateway</html>')).type).toBe('unknown');
    const hostile = parseProblem(
      400,
      body({
        type: `urn:ietf:params:acme:error:${'x'.repeat(500)}\n<script>`,
        subproblems: [null, 5, { identifier: { type: 'dns', value: 'a.test' } }],
      }),
    );
    expect(hostile.type.length).toBeLessThanOrEqual(64);
    expect(hostile.type).not.toMatch(/[\n<>]/);
    expect(hostile.subproblems[2]?.identifier?.value).toBe('a.test');
    expect(problemToError(hostile, 'new-order').code).toBe('unavailable');
  });
});
