import type { EphemeralStore } from '../../ports/ephemeral.js';

/**
 * http-01 answers (RFC 8555 §8.3) for the ACME issuer connector: while an authorization is
 * being validated, the CA fetches `http://<name>/.well-known/acme-challenge/<token>` and must
 * receive the key authorization. The connector publishes it here; the reference server's
 * `/.well-known/acme-challenge/{token}` route answers from the same store. On the shared
 * ephemeral store (Redis with several instances) any instance behind the name can answer.
 */
export interface Http01Responder {
  present(token: string, keyAuthorization: string): Promise<void>;
  cleanup(token: string): Promise<void>;
}

/** Token syntax (base64url, RFC 8555 §8.1); anything else is never looked up. */
export const HTTP01_TOKEN = /^[A-Za-z0-9_-]{16,256}$/;
const PREFIX = 'acme-issuer-http01:';
/** How long an answer stays published if its cleanup never runs (a crashed process). */
const TTL_MS = 10 * 60_000;

export interface Http01Store extends Http01Responder {
  /** The key authorization for `token`, undefined when none is published. */
  answer(token: string): Promise<string | undefined>;
}

export function ephemeralHttp01Store(store: EphemeralStore): Http01Store {
  return {
    async present(token, keyAuthorization) {
      if (!HTTP01_TOKEN.test(token)) throw new Error('http-01 token is not base64url');
      await store.delete(PREFIX + token);
      await store.putIfAbsent(PREFIX + token, keyAuthorization, TTL_MS);
    },
    async cleanup(token) {
      if (HTTP01_TOKEN.test(token)) await store.delete(PREFIX + token);
    },
    async answer(token) {
      return HTTP01_TOKEN.test(token) ? store.get(PREFIX + token) : undefined;
    },
  };
}
