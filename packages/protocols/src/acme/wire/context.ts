import type { KeyObject } from 'node:crypto';
import {
  type AcmeAccount,
  type CertificateProfile,
  isCertwrightError,
  type Logger,
  type PlainResponse,
  type PublicJwk,
  type RequestHead,
  type TransportContext,
} from '@certwright/core';
import { type ParsedPublicJwk, type PublicKeyDescription, parsePublicJwk } from '@certwright/core/pki';
import type { AcmeAuthority } from './authority.js';
import { type JwsLimits, jwsPayloadObject, type ParsedJws, parseJwsBody, verifyJws } from './jws.js';
import type { AcmeLinks } from './links.js';
import type { NonceStore } from './nonces.js';
import { acmeProblem } from './problem.js';

/**
 * The endpoint interface: every ACME endpoint is one {@link AcmeEndpoint} in its own file,
 * registered in `routes.ts`. The handler resolves the profile, builds the links, and adds
 * `Replay-Nonce`, `Link: <directory>;rel="index"` and `Cache-Control: no-store` to whatever an
 * endpoint answers, problems included; an endpoint throws `CertwrightError`s (or
 * `acmeProblem(…)`) for failures and returns a plain answer (see `responses.ts`) for success.
 */
export type AcmeEndpoint = (
  ctx: AcmeContext,
  params: Readonly<Record<string, string>>,
) => Promise<PlainResponse>;

export interface AcmeContext {
  /** Method, URL and headers; the body is read by {@link authenticate} only. */
  readonly request: RequestHead;
  readonly transport: TransportContext;
  /** The profile the path addresses; it has ACME enabled. */
  readonly profile: CertificateProfile;
  /** URLs of this profile's resources, on the external base URL. */
  readonly links: AcmeLinks;
  readonly authority: AcmeAuthority;
  /** The external URL of this request: what a JWS `url` must equal (RFC 8555 §6.4). */
  readonly url: string;
  /** The client's address as the host resolved it (per-address limits, audit). */
  readonly clientAddress: string;
  readonly settings: AcmeServerSettings;
  readonly now: () => Date;
  readonly logger: Logger;
  /**
   * Reads and verifies the JWS body (RFC 8555 §6.2–6.5): Content-Type
   * `application/jose+json`, bounded parse, `url` equal to {@link url}, the nonce consumed,
   * then the key — `kid` looked up as an account of this profile whose status is `valid`, or
   * `jwk` where the endpoint allows it — and the signature. Each failure is the problem
   * RFC 8555 names (malformed, unauthorized, badNonce, accountDoesNotExist,
   * badSignatureAlgorithm, badPublicKey) and changes nothing but the spent nonce.
   */
  authenticate<K extends AuthKind = 'kid'>(options?: AuthenticateOptions<K>): Promise<Authenticated<K>>;
}

/** Server-wide ACME settings (the reference server reads them from `SVC_ACME_SERVER_*`). */
export interface AcmeServerSettings {
  /** RFC 9773 renewal information is served and listed in the directory. */
  renewalInfo: boolean;
  /** `Retry-After` of renewal-information answers, in seconds. */
  renewalInfoPollSeconds: number;
  /** Requests one account may sign per window (account-limit.ts); null: no per-account limit. */
  accountRequests: { limit: number; windowMs: number } | null;
}

/** Which key a request may be signed with. */
export type AuthKind = 'kid' | 'jwk' | 'either';

export interface AuthenticateOptions<K extends AuthKind = AuthKind> {
  /** Default `kid`: an existing account. `jwk`: new-account; `either`: revoke-cert (§7.6). */
  key?: K;
}

interface AuthenticatedBase {
  jws: ParsedJws;
  /** The payload object; `undefined` for POST-as-GET (empty payload). */
  payload: Record<string, unknown> | undefined;
  /** RFC 8555 §6.3: the payload is the empty string. */
  postAsGet: boolean;
}

/** Signed by the key of an existing, valid account (`kid`). */
export interface AccountAuthenticated extends AuthenticatedBase {
  kind: 'account';
  account: AcmeAccount;
}

/** Signed by the key in the header (`jwk`), already checked and verified. */
export interface JwkAuthenticated extends AuthenticatedBase {
  kind: 'jwk';
  jwk: PublicJwk;
  thumbprint: string;
  key: KeyObject;
  description: PublicKeyDescription;
}

export type Authenticated<K extends AuthKind = 'kid'> = K extends 'kid'
  ? AccountAuthenticated
  : K extends 'jwk'
    ? JwkAuthenticated
    : AccountAuthenticated | JwkAuthenticated;

const JOSE_JSON = 'application/jose+json';

export interface AuthenticatorDeps {
  request: RequestHead;
  /**
   * The body, at most `maxBytes` of it (a `payload_too_large` error beyond): streamed from a Web
   * Request, or the bytes the server's listener already read.
   */
  readBody: (maxBytes: number) => Promise<Uint8Array>;
  url: string;
  profile: CertificateProfile;
  links: AcmeLinks;
  authority: AcmeAuthority;
  nonces: NonceStore;
  limits: JwsLimits;
  /** Account keys already read and checked, by thumbprint (see {@link AccountKeyCache}). */
  keys: AccountKeyCache;
  /** Spends the account's request budget; throws `rateLimited` over it (account-limit.ts). */
  spendAccount?: (accountId: string) => Promise<void>;
}

/**
 * Stored account keys, read and checked once: the key check of a P-256 or RSA JWK costs more
 * than the signature check it enables. Keyed by RFC 7638 thumbprint, so a rolled-over key is a
 * different entry; bounded, oldest dropped first.
 */
export class AccountKeyCache {
  readonly #entries = new Map<string, ParsedPublicJwk>();
  constructor(readonly max = 1000) {}

  get(jwk: PublicJwk, thumbprint: string): ParsedPublicJwk {
    const hit = this.#entries.get(thumbprint);
    if (hit) return hit;
    const parsed = parsePublicJwk(jwk);
    // A stored key whose thumbprint is not its own is never cached under the wrong name.
    if (parsed.thumbprint !== thumbprint) return parsed;
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(thumbprint, parsed);
    return parsed;
  }
}

/** Builds {@link AcmeContext.authenticate} for one request. */
export function authenticator(deps: AuthenticatorDeps): AcmeContext['authenticate'] {
  let used = false;
  return async <K extends AuthKind = 'kid'>(options: AuthenticateOptions<K> = {}) => {
    if (used) throw new TypeError('authenticate() reads the body and may be called once per request');
    used = true;
    const kind: AuthKind = options.key ?? 'kid';
    const type = deps.request.headers.get('content-type');
    if (type === null || type.split(';')[0]!.trim().toLowerCase() !== JOSE_JSON) {
      throw acmeProblem('malformed', `the Content-Type must be ${JOSE_JSON}`, { status: 415 });
    }
    let body: Uint8Array;
    try {
      body = await deps.readBody(deps.limits.maxBytes);
    } catch (error) {
      if (isCertwrightError(error) && error.code === 'payload_too_large') {
        throw acmeProblem('malformed', `the JWS is larger than ${deps.limits.maxBytes} bytes`, {
          status: 413,
        });
      }
      throw error;
    }
    const jws = parseJwsBody(body, 'request', deps.limits);
    const { header } = jws;
    if (header.url !== deps.url) {
      throw acmeProblem('unauthorized', "the JWS 'url' is not the URL this request was sent to");
    }
    await deps.nonces.consume(header.nonce);
    const base = () => ({
      jws,
      payload: jwsPayloadObject(jws),
      postAsGet: jws.payloadBytes.byteLength === 0,
    });

    if (header.jwk) {
      if (kind === 'kid') {
        throw acmeProblem('malformed', "this request must be signed by an account key named by 'kid'");
      }
      await verifyJws(jws, header.jwk);
      const result: JwkAuthenticated = {
        ...base(),
        kind: 'jwk',
        jwk: header.jwk.jwk,
        thumbprint: header.jwk.thumbprint,
        key: header.jwk.key,
        description: header.jwk.description,
      };
      return result as Authenticated<K>;
    }
    if (kind === 'jwk') throw acmeProblem('malformed', "this request must carry the account key as 'jwk'");
    const accountId = deps.links.accountIdOf(header.kid as string);
    const account = accountId ? await deps.authority.account(accountId) : null;
    if (!account || account.profile_id !== deps.profile.id) {
      throw acmeProblem('accountDoesNotExist', "no account of this server is named by the JWS 'kid'");
    }
    await verifyJws(jws, deps.keys.get(account.jwk, account.jwk_thumbprint));
    if (account.status !== 'valid') {
      throw acmeProblem('unauthorized', `the account is ${account.status}`);
    }
    // Counted once the signature proved the account's: nobody else can spend its budget.
    await deps.spendAccount?.(account.id);
    const result: AccountAuthenticated = { ...base(), kind: 'account', account };
    return result as Authenticated<K>;
  };
}
