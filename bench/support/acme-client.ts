/**
 * A minimal ACME client (RFC 8555) for load generation: ES256 account keys, one keep-alive
 * HTTPS agent, nonces chained from each answer's `Replay-Nonce`. It drives any ACME server the
 * same way, so two servers under it do the same protocol work; only a challenge that is
 * still pending is answered (http-01 preferred), which a server with auto-valid
 * authorizations never needs.
 *
 * Keys and CSRs are made by the caller beforehand: the client signs requests, nothing more.
 */
import { type KeyObject, sign } from 'node:crypto';
import { type Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

export interface AcmeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json(): unknown;
}

/** The members of RFC 8555 objects this client reads. */
interface OrderJson {
  status: string;
  authorizations: string[];
  finalize: string;
  certificate?: string;
}
interface AuthorizationJson {
  status: string;
  challenges: { type: string; url: string }[];
}

export interface AcmeDirectory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
}

export interface AcmeClientOptions {
  directoryUrl: string;
  agent: Agent;
  /** Between two polls of an order or authorization that is not there yet. */
  pollMs?: number;
}

/** An account: its key and the `kid` (account URL) the server gave it. */
export interface AcmeAccountKey {
  key: KeyObject;
  kid: string;
}

export class AcmeBenchError extends Error {
  /** The HTTP status of the answer refused, when the failure was one. */
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Socket inactivity allowed per request before the run fails. */
const REQUEST_TIMEOUT_MS = 60_000;

const b64u = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export class AcmeBenchClient {
  readonly #agent: Agent;
  readonly #directoryUrl: string;
  readonly #pollMs: number;
  #directory: AcmeDirectory | undefined;
  /** Requests sent; a benchmark divides it by the issuances. */
  requests = 0;

  constructor(options: AcmeClientOptions) {
    this.#agent = options.agent;
    this.#directoryUrl = options.directoryUrl;
    this.#pollMs = options.pollMs ?? 20;
  }

  send(method: string, url: string, body?: string): Promise<AcmeResponse> {
    this.requests++;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          agent: this.#agent,
          headers: body === undefined ? {} : { 'content-type': 'application/jose+json' },
          // A lost answer fails the run instead of stalling it (seen once against pebble).
          timeout: REQUEST_TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const data = Buffer.concat(chunks);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: data,
              json: () => JSON.parse(data.toString('utf8')),
            });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`no answer to ${method} ${url} in ${REQUEST_TIMEOUT_MS} ms`)),
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  async directory(): Promise<AcmeDirectory> {
    if (!this.#directory) {
      const res = await this.send('GET', this.#directoryUrl);
      if (res.status !== 200) throw new AcmeBenchError(`directory answered ${res.status}`, res.status);
      this.#directory = res.json() as AcmeDirectory;
    }
    return this.#directory;
  }

  async newNonce(): Promise<string> {
    const res = await this.send('HEAD', (await this.directory()).newNonce);
    const nonce = res.headers['replay-nonce'];
    if (typeof nonce !== 'string')
      throw new AcmeBenchError(`new-nonce answered ${res.status} without a nonce`, res.status);
    return nonce;
  }

  /**
   * One signed POST (`payload` undefined: POST-as-GET). `session.nonce` is spent and replaced by
   * the answer's; a `badNonce` answer is retried once with the fresh nonce it carries.
   */
  async post(
    session: { nonce: string },
    url: string,
    key: KeyObject,
    signer: { kid: string } | 'jwk',
    payload: unknown,
  ): Promise<AcmeResponse> {
    for (let attempt = 0; ; attempt++) {
      const header: Record<string, unknown> = { alg: 'ES256', nonce: session.nonce, url };
      if (signer === 'jwk') {
        const { kty, crv, x, y } = key.export({ format: 'jwk' });
        header.jwk = { crv, kty, x, y };
      } else header.kid = signer.kid;
      const protectedB64 = b64u(JSON.stringify(header));
      const payloadB64 = payload === undefined ? '' : b64u(JSON.stringify(payload));
      const signature = sign('sha256', Buffer.from(`${protectedB64}.${payloadB64}`), {
        key,
        dsaEncoding: 'ieee-p1363',
      });
      const res = await this.send(
        'POST',
        url,
        JSON.stringify({ protected: protectedB64, payload: payloadB64, signature: b64u(signature) }),
      );
      const next = res.headers['replay-nonce'];
      if (typeof next === 'string') session.nonce = next;
      else session.nonce = await this.newNonce();
      if (res.status === 400 && attempt === 0 && /badNonce/.test(res.body.toString())) continue;
      return res;
    }
  }

  async newAccount(key: KeyObject): Promise<AcmeAccountKey> {
    const session = { nonce: await this.newNonce() };
    const res = await this.post(session, (await this.directory()).newAccount, key, 'jwk', {
      termsOfServiceAgreed: true,
    });
    const kid = res.headers.location;
    if ((res.status !== 201 && res.status !== 200) || typeof kid !== 'string')
      throw new AcmeBenchError(`new-account answered ${res.status}: ${res.body}`, res.status);
    return { key, kid };
  }

  /**
   * One issuance: new-nonce → new-order → each authorization (its challenge answered and the
   * authorization polled when it is pending) → finalize → order polled until valid →
   * certificate download. Returns the PEM chain.
   */
  async issue(account: AcmeAccountKey, name: string, csrDer: Buffer): Promise<string> {
    const signer = { kid: account.kid };
    const session = { nonce: await this.newNonce() };
    const call = async (url: string, payload: unknown, expect: number[], what: string) => {
      const res = await this.post(session, url, account.key, signer, payload);
      if (!expect.includes(res.status))
        throw new AcmeBenchError(
          `${what} answered ${res.status}: ${res.body.toString().slice(0, 300)}`,
          res.status,
        );
      return res;
    };
    const created = await call(
      (await this.directory()).newOrder,
      { identifiers: [{ type: 'dns', value: name }] },
      [201],
      'new-order',
    );
    const orderUrl = created.headers.location as string;
    let order = created.json() as OrderJson;
    for (const authzUrl of order.authorizations) {
      let authz = (await call(authzUrl, undefined, [200], 'authorization')).json() as AuthorizationJson;
      if (authz.status === 'pending') {
        const challenge = authz.challenges.find((c) => c.type === 'http-01') ?? authz.challenges[0];
        if (!challenge) throw new AcmeBenchError('a pending authorization offers no challenge');
        await call(challenge.url, {}, [200], 'challenge');
        while (authz.status === 'pending' || authz.status === 'processing') {
          await sleep(this.#pollMs);
          authz = (await call(authzUrl, undefined, [200], 'authorization')).json() as AuthorizationJson;
        }
      }
      if (authz.status !== 'valid') throw new AcmeBenchError(`authorization is ${authz.status}`);
    }
    while (order.status === 'pending') {
      await sleep(this.#pollMs);
      order = (await call(orderUrl, undefined, [200], 'order')).json() as OrderJson;
    }
    order = (await call(order.finalize, { csr: b64u(csrDer) }, [200], 'finalize')).json() as OrderJson;
    while (order.status === 'processing' || order.status === 'ready') {
      await sleep(this.#pollMs);
      order = (await call(orderUrl, undefined, [200], 'order')).json() as OrderJson;
    }
    if (order.status !== 'valid' || !order.certificate) throw new AcmeBenchError(`order is ${order.status}`);
    const cert = await call(order.certificate, undefined, [200], 'certificate');
    return cert.body.toString('utf8');
  }
}
