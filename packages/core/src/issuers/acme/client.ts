import { createHmac, type KeyObject, sign } from 'node:crypto';
import { fail, isCertwrightError } from '../../errors.js';
import { administratorFetchFailed } from '../../net/administrator-client.js';
import type { OutboundClient } from '../../net/client.js';
import type { OutboundResponse } from '../../net/http-request.js';
import {
  type AcmeIssuerProblem,
  acmeProblemType,
  parseProblem,
  problemToError,
  retryAfterSeconds,
} from './problems.js';

/**
 * A client of an RFC 8555 certificate authority, for the ACME issuer connector. Every request
 * goes through the outbound client it is given (the address guard). Requests are JWS signed
 * with the account key (ES256 or RS256, RFC 8555 §6.2); a `badNonce` answer is retried with
 * the fresh nonce it carries (§6.5). Every URL the server hands out must lie on the
 * directory's origin: a server cannot send certwright to another host.
 */

export interface AcmeDirectory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
  revokeCert?: string;
  keyChange?: string;
  /** RFC 9773 (ACME Renewal Information). */
  renewalInfo?: string;
  meta?: {
    termsOfService?: string;
    externalAccountRequired?: boolean;
    /** ACME profiles (draft-aaron-acme-profiles): name → description. */
    profiles?: Record<string, unknown>;
  };
}

export interface AcmeOrder {
  status: 'pending' | 'ready' | 'processing' | 'valid' | 'invalid';
  identifiers: { type: string; value: string }[];
  authorizations: string[];
  finalize: string;
  certificate?: string;
  error?: unknown;
}

export interface AcmeChallenge {
  type: string;
  url: string;
  token?: string;
  status: string;
  error?: unknown;
}

export interface AcmeAuthorization {
  status: 'pending' | 'valid' | 'invalid' | 'deactivated' | 'expired' | 'revoked';
  identifier: { type: string; value: string };
  challenges: AcmeChallenge[];
  wildcard?: boolean;
}

export interface AcmeClientOptions {
  directoryUrl: string;
  outbound: OutboundClient;
  /** The account key (EC P-256 or RSA). */
  accountKey: KeyObject;
  /** PEM bundle trusted instead of the system roots (a private ACME server). */
  caBundlePem?: string;
  now: () => Date;
  /** Waits between polls; tests keep the real one. */
  sleep?: (ms: number) => Promise<void>;
  /** Per request; default 30 s. */
  timeoutMs?: number;
}

export interface AcmeAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  location?: string;
}

/** Most answers are small JSON; a certificate chain a few KiB. */
const MAX_RESPONSE_BYTES = 256 * 1024;
/** badNonce answers retried per request before giving up. */
const NONCE_RETRIES = 5;

const b64u = (data: string | Uint8Array): string => Buffer.from(data).toString('base64url');

export class AcmeClient {
  readonly #options: AcmeClientOptions;
  readonly #origin: string;
  readonly #jwk: Record<string, string>;
  readonly #alg: 'ES256' | 'RS256';
  #directory: AcmeDirectory | undefined;
  #nonce: string | undefined;
  /** The account URL (`kid`) once known. */
  accountUrl: string | undefined;

  constructor(options: AcmeClientOptions) {
    this.#options = options;
    this.#origin = new URL(options.directoryUrl).origin;
    const jwk = options.accountKey.export({ format: 'jwk' }) as Record<string, string>;
    if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
      this.#alg = 'ES256';
      this.#jwk = { crv: jwk.crv, kty: jwk.kty, x: jwk.x!, y: jwk.y! };
    } else if (jwk.kty === 'RSA') {
      this.#alg = 'RS256';
      this.#jwk = { e: jwk.e!, kty: jwk.kty, n: jwk.n! };
    } else {
      throw fail('invalid_input', 'the ACME account key must be EC P-256 or RSA');
    }
  }

  /** The account's public JWK (members in RFC 7638 order), for key authorizations. */
  get jwk(): Record<string, string> {
    return this.#jwk;
  }

  /** Refuses a URL the server handed out that leaves the directory's origin. */
  #sameOrigin(url: unknown, what: string): string {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== this.#origin) {
      throw fail(
        'unavailable',
        `the ACME server answered ${what} with a URL outside its directory's origin ${this.#origin}; refused`,
      );
    }
    return parsed.href;
  }

  async #send(url: string, method: string, body?: string, accept?: string): Promise<OutboundResponse> {
    return this.#options.outbound
      .request(url, {
        method,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/jose+json' } : {}),
          ...(accept ? { accept } : {}),
        },
        ...(body !== undefined ? { body } : {}),
        timeoutMs: this.#options.timeoutMs ?? 30_000,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        field: 'config.directory_url',
        ...(this.#options.caBundlePem ? { tls: { ca: this.#options.caBundlePem } } : {}),
      })
      .catch((cause: unknown) => {
        // The guard's refusal (validation_failed) names the setting; every network failure
        // (no name, no listener, TLS, timeout …) is the one sentence, the cause logged.
        if (!isCertwrightError(cause) || cause.code !== 'unavailable') throw cause;
        throw administratorFetchFailed(this.#what, cause);
      });
  }

  /** The destination in failures: the administrator's own URL, up to its origin. */
  get #what(): string {
    return `the ACME server ${this.#origin}`;
  }

  /**
   * The directory (RFC 8555 §7.1.1). Whatever keeps it from being one — an HTTP error, an
   * answer that is not JSON, URLs outside its origin — is the same failure as no answer at all
   * (the cause logged), so the directory URL cannot be used to tell internal services apart.
   */
  async directory(): Promise<AcmeDirectory> {
    if (this.#directory) return this.#directory;
    const res = await this.#send(this.#options.directoryUrl, 'GET');
    try {
      this.#directory = this.#readDirectory(res);
    } catch (cause) {
      throw administratorFetchFailed(this.#what, cause);
    }
    return this.#directory;
  }

  #readDirectory(res: OutboundResponse): AcmeDirectory {
    if (res.status !== 200) throw this.#problem(res, 'the directory request');
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(Buffer.from(res.body).toString('utf8'));
    } catch {
      throw fail('unavailable', 'the ACME directory is not JSON: check config.directory_url');
    }
    if (typeof json !== 'object' || json === null) {
      throw fail('unavailable', 'the ACME directory is not a JSON object');
    }
    return {
      newNonce: this.#sameOrigin(json.newNonce, 'the directory'),
      newAccount: this.#sameOrigin(json.newAccount, 'the directory'),
      newOrder: this.#sameOrigin(json.newOrder, 'the directory'),
      ...(json.revokeCert ? { revokeCert: this.#sameOrigin(json.revokeCert, 'the directory') } : {}),
      ...(json.renewalInfo ? { renewalInfo: this.#sameOrigin(json.renewalInfo, 'the directory') } : {}),
      ...(typeof json.meta === 'object' && json.meta !== null
        ? { meta: json.meta as AcmeDirectory['meta'] }
        : {}),
    };
  }

  async #freshNonce(): Promise<string> {
    const res = await this.#send((await this.directory()).newNonce, 'HEAD');
    const nonce = res.headers['replay-nonce'];
    if (!nonce) throw fail('unavailable', 'the ACME server gave no nonce (new-nonce)');
    return nonce;
  }

  #sign(protectedHeader: Record<string, unknown>, payload: unknown): string {
    const protectedB64 = b64u(JSON.stringify(protectedHeader));
    const payloadB64 = payload === undefined ? '' : b64u(JSON.stringify(payload));
    const input = Buffer.from(`${protectedB64}.${payloadB64}`);
    const signature =
      this.#alg === 'ES256'
        ? sign('sha256', input, { key: this.#options.accountKey, dsaEncoding: 'ieee-p1363' })
        : sign('sha256', input, this.#options.accountKey);
    return JSON.stringify({ protected: protectedB64, payload: payloadB64, signature: b64u(signature) });
  }

  /**
   * External account binding (RFC 8555 §7.3.4): the account's public JWK, MAC'd with the
   * key the CA handed out (`kid`, base64url HMAC key).
   */
  externalAccountBinding(kid: string, hmacKeyB64u: string, url: string): Record<string, string> {
    const protectedB64 = b64u(JSON.stringify({ alg: 'HS256', kid, url }));
    const payloadB64 = b64u(JSON.stringify(this.#jwk));
    const mac = createHmac('sha256', Buffer.from(hmacKeyB64u, 'base64url'))
      .update(`${protectedB64}.${payloadB64}`)
      .digest();
    return { protected: protectedB64, payload: payloadB64, signature: b64u(mac) };
  }

  /**
   * One signed POST (`payload` undefined: POST-as-GET). `signer: 'jwk'` for new-account and
   * key-signed revocation, otherwise the account URL. Problems become domain failures.
   */
  async post(
    url: string,
    payload: unknown,
    what: string,
    options: { signer?: 'jwk' | 'kid'; accept?: string; expect?: number[] } = {},
  ): Promise<AcmeAnswer> {
    const signer = options.signer ?? 'kid';
    if (signer === 'kid' && !this.accountUrl)
      throw fail('issuer_not_ready', 'the ACME account is not registered');
    for (let attempt = 0; ; attempt++) {
      const nonce = this.#nonce ?? (await this.#freshNonce());
      this.#nonce = undefined;
      const header: Record<string, unknown> = { alg: this.#alg, nonce, url };
      if (signer === 'jwk') header.jwk = this.#jwk;
      else header.kid = this.accountUrl;
      const res = await this.#send(url, 'POST', this.#sign(header, payload), options.accept);
      if (res.headers['replay-nonce']) this.#nonce = res.headers['replay-nonce'];
      if (res.status >= 400) {
        const problem = parseProblem(res.status, res.body);
        if (problem.type === 'badNonce' && attempt < NONCE_RETRIES) continue;
        throw this.#problemError(problem, res, what);
      }
      if (options.expect && !options.expect.includes(res.status)) {
        throw fail('unavailable', `the ACME server answered ${what} with HTTP ${res.status}`);
      }
      const location = res.headers.location;
      return {
        status: res.status,
        headers: res.headers,
        body: res.body,
        ...(location ? { location: this.#sameOrigin(location, what) } : {}),
      };
    }
  }

  #problem(res: OutboundResponse, what: string) {
    return this.#problemError(parseProblem(res.status, res.body), res, what);
  }

  #problemError(problem: AcmeIssuerProblem, res: { headers: Record<string, string> }, what: string) {
    return problemToError(problem, what, retryAfterSeconds(res.headers['retry-after'], this.#options.now()));
  }

  /** JSON of an answer, with a clear failure when it is not JSON. */
  json<T>(answer: AcmeAnswer, what: string): T {
    try {
      const value = JSON.parse(Buffer.from(answer.body).toString('utf8'));
      if (typeof value === 'object' && value !== null) return value as T;
    } catch {
      // fall through
    }
    throw fail('unavailable', `the ACME server answered ${what} with something that is not a JSON object`);
  }

  /**
   * new-account (RFC 8555 §7.3): `onlyReturnExisting` looks the key's account up without
   * creating one (null when there is none); otherwise the account is created, with an
   * external account binding when `eab` is given.
   */
  async account(input: {
    contact?: readonly string[];
    eab?: { kid: string; hmacKey: string };
    onlyReturnExisting?: boolean;
  }): Promise<string | null> {
    const directory = await this.directory();
    const payload: Record<string, unknown> = input.onlyReturnExisting
      ? { onlyReturnExisting: true }
      : {
          termsOfServiceAgreed: true,
          ...(input.contact?.length ? { contact: [...input.contact] } : {}),
          ...(input.eab
            ? {
                externalAccountBinding: this.externalAccountBinding(
                  input.eab.kid,
                  input.eab.hmacKey,
                  directory.newAccount,
                ),
              }
            : {}),
        };
    try {
      const answer = await this.post(directory.newAccount, payload, 'new-account', {
        signer: 'jwk',
        expect: [200, 201],
      });
      if (!answer.location)
        throw fail('unavailable', 'the ACME server answered new-account without an account URL');
      this.accountUrl = answer.location;
      return answer.location;
    } catch (error) {
      if (input.onlyReturnExisting && acmeProblemType(error) === 'accountDoesNotExist') return null;
      throw error;
    }
  }

  async newOrder(input: {
    identifiers: { type: 'dns' | 'ip'; value: string }[];
    replaces?: string;
    profile?: string;
  }): Promise<{ url: string; order: AcmeOrder }> {
    const directory = await this.directory();
    const answer = await this.post(
      directory.newOrder,
      {
        identifiers: input.identifiers,
        ...(input.replaces ? { replaces: input.replaces } : {}),
        ...(input.profile ? { profile: input.profile } : {}),
      },
      'new-order',
      { expect: [201] },
    );
    if (!answer.location)
      throw fail('unavailable', 'the ACME server answered new-order without an order URL');
    return { url: answer.location, order: this.#order(answer, 'new-order') };
  }

  #order(answer: AcmeAnswer, what: string): AcmeOrder {
    const order = this.json<AcmeOrder>(answer, what);
    if (!Array.isArray(order.authorizations) || typeof order.finalize !== 'string')
      throw fail('unavailable', `the ACME server answered ${what} with an incomplete order`);
    order.authorizations = order.authorizations.slice(0, 100).map((u) => this.#sameOrigin(u, what));
    order.finalize = this.#sameOrigin(order.finalize, what);
    if (order.certificate !== undefined) order.certificate = this.#sameOrigin(order.certificate, what);
    return order;
  }

  async getOrder(url: string): Promise<{ order: AcmeOrder; retryAfter?: number }> {
    const answer = await this.post(url, undefined, 'the order', { expect: [200] });
    const retryAfter = retryAfterSeconds(answer.headers['retry-after'], this.#options.now());
    return { order: this.#order(answer, 'the order'), ...(retryAfter !== undefined ? { retryAfter } : {}) };
  }

  async getAuthorization(url: string): Promise<{ authz: AcmeAuthorization; retryAfter?: number }> {
    const answer = await this.post(url, undefined, 'the authorization', { expect: [200] });
    const authz = this.json<AcmeAuthorization>(answer, 'the authorization');
    if (!Array.isArray(authz.challenges) || typeof authz.identifier?.value !== 'string')
      throw fail('unavailable', 'the ACME server answered with an incomplete authorization');
    authz.challenges = authz.challenges
      .slice(0, 20)
      .map((c) => ({ ...c, url: this.#sameOrigin(c.url, 'the authorization') }));
    const retryAfter = retryAfterSeconds(answer.headers['retry-after'], this.#options.now());
    return { authz, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  }

  /** Tells the server the challenge is ready to be checked (RFC 8555 §7.5.1). */
  async respond(challengeUrl: string): Promise<void> {
    await this.post(challengeUrl, {}, 'the challenge response', { expect: [200] });
  }

  async finalize(url: string, csrDer: Uint8Array): Promise<AcmeOrder> {
    const answer = await this.post(url, { csr: b64u(csrDer) }, 'finalize', { expect: [200] });
    return this.#order(answer, 'finalize');
  }

  /** The certificate chain as PEM (RFC 8555 §7.4.2). */
  async download(url: string): Promise<string> {
    const answer = await this.post(url, undefined, 'the certificate download', {
      accept: 'application/pem-certificate-chain',
      expect: [200],
    });
    return Buffer.from(answer.body).toString('utf8');
  }

  /** revokeCert (RFC 8555 §7.6), signed with the account key. */
  async revoke(certificateDer: Uint8Array, reasonCode: number): Promise<void> {
    const directory = await this.directory();
    if (!directory.revokeCert) throw fail('unavailable', 'the ACME server offers no revokeCert endpoint');
    await this.post(
      directory.revokeCert,
      { certificate: b64u(certificateDer), reason: reasonCode },
      'revokeCert',
      {
        expect: [200],
      },
    );
  }

  /** Waits `seconds` (bounded), or the default poll interval. */
  async wait(seconds: number | undefined, fallbackMs: number): Promise<void> {
    const ms = seconds !== undefined ? Math.min(Math.max(seconds * 1000, 100), 60_000) : fallbackMs;
    await (this.#options.sleep ?? ((t: number) => new Promise<void>((r) => setTimeout(r, t))))(ms);
  }
}
