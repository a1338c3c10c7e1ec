import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { TransportContext } from '@certwright/core';
import { FlattenedSign } from 'jose';
import type { CertwrightHandler } from '../../src/index.js';
import { conformance } from './openapi-conformance.js';

/**
 * A minimal ACME client over `new Request(…)` for the handler tests: it signs with jose's
 * FlattenedSign, as a real client would, and lets a test bend any part of the request
 * (url, nonce, key, body) to prove what the server refuses.
 */

export const ORIGIN = 'https://localhost:8443';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const enc = new TextEncoder();

export interface AccountKey {
  alg: 'ES256' | 'EdDSA' | 'RS256';
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

export function newAccountKey(alg: AccountKey['alg'] = 'ES256'): AccountKey {
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    alg,
    privateKey: pair.privateKey,
    jwk: pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
  };
}

export interface SignOptions {
  key: AccountKey;
  /** Sign with `kid` (an account URL) instead of `jwk`. */
  kid?: string;
  url: string;
  nonce?: string | null;
  /** Extra protected header members. */
  header?: Record<string, unknown>;
}

/** A flattened JWS object; payload `''` is POST-as-GET. */
export async function signJws(payload: unknown, options: SignOptions): Promise<Record<string, string>> {
  const header: Record<string, unknown> = { alg: options.key.alg, url: options.url, ...options.header };
  if (options.nonce !== null && options.nonce !== undefined) header.nonce = options.nonce;
  if (options.kid) header.kid = options.kid;
  else header.jwk = options.key.jwk;
  const bytes = typeof payload === 'string' ? enc.encode(payload) : enc.encode(JSON.stringify(payload));
  const jws = await new FlattenedSign(bytes).setProtectedHeader(header as never).sign(options.key.privateKey);
  return jws as unknown as Record<string, string>;
}

export interface AcmeAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies loosely, as a client does.
  body: any;
}

export class AcmeTestClient {
  constructor(
    readonly handler: CertwrightHandler,
    readonly base = `${ORIGIN}/acme`,
  ) {}

  async send(
    method: string,
    url: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<AcmeAnswer> {
    const request = new Request(url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/jose+json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
    const response = await conformance.call(this.handler, request, transport);
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      headers: response.headers,
      body: text && /json/.test(type) ? JSON.parse(text) : text,
    };
  }

  async nonce(): Promise<string> {
    const answer = await this.send('HEAD', `${this.base}/new-nonce`);
    const nonce = answer.headers.get('replay-nonce');
    if (!nonce) throw new Error('no Replay-Nonce');
    return nonce;
  }

  async directory(): Promise<Record<string, string>> {
    return (await this.send('GET', `${this.base}/directory`)).body;
  }

  /** Signs `payload` for `url` with a fresh nonce (unless given) and POSTs it. */
  async post(
    url: string,
    payload: unknown,
    options: Omit<SignOptions, 'url'> & { sendTo?: string },
  ): Promise<AcmeAnswer> {
    const nonce = options.nonce === undefined ? await this.nonce() : options.nonce;
    const jws = await signJws(payload, { ...options, url, nonce });
    return this.send('POST', options.sendTo ?? url, JSON.stringify(jws));
  }
}
