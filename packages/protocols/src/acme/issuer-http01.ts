import type { Http01Store } from '@certwright/core';
import { type ProtocolMount, tooManyRequestsText } from '../shared/mount.js';

/**
 * `/.well-known/acme-challenge/{token}` (RFC 8555 §8.3): the http-01 answers of the ACME
 * *issuer* connector, when certwright is the client of an external CA and that CA validates a
 * name served by this host. The connector publishes each key authorization on the ephemeral
 * store while its authorization is validated; nothing else is ever served here.
 */
export const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge';

const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

const plain = (status: number, body: string) =>
  new Response(body, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  });

/** The answers the ACME issuer connector publishes (core's `ephemeralHttp01Store`). */
export function acmeChallengeMount(store: Pick<Http01Store, 'answer'>): ProtocolMount {
  const path = `${ACME_CHALLENGE_PATH}/{token}`;
  return {
    prefix: ACME_CHALLENGE_PATH,
    route: path,
    public: {
      why: 'an external ACME CA fetches http-01 answers anonymously (RFC 8555 §8.3)',
      rateLimit: 'public',
    },
    rateLimited: tooManyRequestsText,
    answer: async (request) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'method not allowed\n');
      const rest = new URL(request.url).pathname.slice(ACME_CHALLENGE_PATH.length + 1);
      if (!TOKEN.test(rest)) return plain(404, 'no such challenge\n');
      const answer = await store.answer(rest);
      if (answer === undefined) return plain(404, 'no such challenge\n');
      return new Response(request.method === 'HEAD' ? null : answer, {
        status: 200,
        headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' },
      });
    },
    operations: {
      [path]: {
        get: {
          operationId: 'getAcmeIssuerChallenge',
          summary:
            'The key authorization of an http-01 challenge the ACME issuer connector is answering (RFC 8555 §8.3)',
          tags: ['acme issuer'],
          parameters: [
            {
              name: 'token',
              in: 'path',
              required: true,
              description: 'the challenge token (base64url)',
              schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,256}$' },
            },
          ],
          responses: {
            200: { description: 'the key authorization', content: { 'application/octet-stream': {} } },
            404: {
              description: 'no challenge with this token is being answered',
              content: { 'text/plain': {} },
            },
            429: { description: 'this client exceeded its rate limit', content: { 'text/plain': {} } },
          },
        },
      },
    },
    operationOf: (request) =>
      request.method === 'GET' || request.method === 'HEAD' ? 'getAcmeIssuerChallenge' : undefined,
  };
}
