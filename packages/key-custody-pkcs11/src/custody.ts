import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  assertMechanismFits,
  type CreateCustodyKey,
  type CustodyKeyInfo,
  checkLabel,
  fail,
  type KeyCustody,
  keyAlgorithmOfSpki,
  type Logger,
  mechanismHash,
} from '@certwright/core';
import { der, type KeyAlgorithm, type SigningKey, type SignMechanism } from '@certwright/core/pki';
import type * as Pkcs11Js from 'pkcs11js';
import type { Pkcs11Config } from './config.js';
import { isResetError, tokenFailure } from './errors.js';

// pkcs11js is CommonJS whose exports are set at run time (a native addon): named ESM imports
// cannot see them.
const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Js;
const P = pkcs11js;

// PKCS#11 3.0 values for EdDSA, which the binding's constant table predates.
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;

/** Named-curve OIDs (RFC 5480 §2.1.1.1, RFC 8410 §3), DER, as CKA_EC_PARAMS takes them. */
const CURVE_PARAMS: Record<string, Buffer> = {
  'ECDSA-P256': der.oid('1.2.840.10045.3.1.7'),
  'ECDSA-P384': der.oid('1.3.132.0.34'),
  Ed25519: der.oid('1.3.101.112'),
};

const HASH_MECH: Record<
  'sha256' | 'sha384' | 'sha512',
  { rsa: number; pss: number; hash: number; mgf: number; len: number }
> = {
  sha256: {
    rsa: P.CKM_SHA256_RSA_PKCS,
    pss: P.CKM_SHA256_RSA_PKCS_PSS,
    hash: P.CKM_SHA256,
    mgf: P.CKG_MGF1_SHA256,
    len: 32,
  },
  sha384: {
    rsa: P.CKM_SHA384_RSA_PKCS,
    pss: P.CKM_SHA384_RSA_PKCS_PSS,
    hash: P.CKM_SHA384,
    mgf: P.CKG_MGF1_SHA384,
    len: 48,
  },
  sha512: {
    rsa: P.CKM_SHA512_RSA_PKCS,
    pss: P.CKM_SHA512_RSA_PKCS_PSS,
    hash: P.CKM_SHA512,
    mgf: P.CKG_MGF1_SHA512,
    len: 64,
  },
};

interface TokenKey {
  privateKey: Buffer;
  spki: Buffer;
  algorithm: KeyAlgorithm;
  extractable: boolean;
}

const b64url = (b: Buffer) => b.toString('base64url');

/** The OCTET STRING a token returns for CKA_EC_POINT (some return the bare point). */
function unwrapPoint(value: Buffer): Buffer {
  if (value[0] !== 0x04 || value.length < 3) return value;
  const long = value[1]! & 0x80;
  const lenBytes = long ? value[1]! & 0x7f : 0;
  const length = long ? value.subarray(2, 2 + lenBytes).reduce((n, b) => n * 256 + b, 0) : value[1]!;
  const start = 2 + lenBytes;
  return start + length === value.length ? value.subarray(start) : value;
}

/** PKCS#11 ECDSA signatures are r‖s; X.509 wants Ecdsa-Sig-Value (RFC 5758 §3.2). */
function ecdsaToDer(raw: Buffer): Buffer {
  const half = raw.length / 2;
  return der.sequence(der.integer(raw.subarray(0, half)), der.integer(raw.subarray(half)));
}

/**
 * A {@link KeyCustody} on a PKCS#11 token. One module load and one login per process; a small
 * pool of sessions so that a slow operation (an RSA key generation, run asynchronously) never
 * holds up signing. After a token reset (sessions closed, token re-inserted, login lost) the
 * next operation re-opens and logs in again, once; when that fails too, the custody reports
 * `unavailable` and {@link ready} is false until the token is back.
 *
 * Keys are generated on the token: CKA_TOKEN, CKA_PRIVATE, CKA_SENSITIVE and, unless asked
 * otherwise, CKA_EXTRACTABLE false, so the private key never leaves it.
 */
export class Pkcs11KeyCustody implements KeyCustody {
  readonly kind = 'pkcs11';
  readonly #config: Pkcs11Config;
  readonly #module: Pkcs11Js.PKCS11;
  readonly #logger: Logger | undefined;
  #slot: Buffer | undefined;
  #idle: Buffer[] = [];
  #all = new Set<Buffer>();
  readonly #keys = new Map<string, TokenKey>();
  #closed = false;

  private constructor(config: Pkcs11Config, module: Pkcs11Js.PKCS11, logger: Logger | undefined) {
    this.#config = config;
    this.#module = module;
    this.#logger = logger;
  }

  /** Loads the module, finds the token and logs in; `config_invalid` for what cannot work. */
  static open(config: Pkcs11Config, options: { logger?: Logger } = {}): Pkcs11KeyCustody {
    const module = new pkcs11js.PKCS11();
    try {
      module.load(config.module);
    } catch {
      throw fail(
        'config_invalid',
        `the PKCS#11 module '${config.module}' cannot be loaded (SVC_PKCS11_MODULE)`,
      );
    }
    try {
      module.C_Initialize();
    } catch (error) {
      if (!String((error as Error).message).startsWith('CKR_CRYPTOKI_ALREADY_INITIALIZED'))
        throw tokenFailure(error, 'initialise', config.tokenLabel);
    }
    const custody = new Pkcs11KeyCustody(config, module, options.logger);
    try {
      custody.#connect();
    } catch (error) {
      custody.#teardown(true);
      throw error;
    }
    return custody;
  }

  #findSlot(): Buffer {
    for (const slot of this.#module.C_GetSlotList(true)) {
      if (this.#module.C_GetTokenInfo(slot).label.trim() === this.#config.tokenLabel) return slot;
    }
    throw fail(
      'config_invalid',
      `no PKCS#11 token labelled '${this.#config.tokenLabel}' (SVC_PKCS11_TOKEN_LABEL)`,
    );
  }

  /** Opens the first session and logs in (the login holds for every session of the process). */
  #connect(): void {
    this.#slot = this.#findSlot();
    const session = this.#module.C_OpenSession(this.#slot, P.CKF_SERIAL_SESSION | P.CKF_RW_SESSION);
    this.#all.add(session);
    try {
      this.#module.C_Login(session, P.CKU_USER, this.#config.pin);
    } catch (error) {
      if (!String((error as Error).message).startsWith('CKR_USER_ALREADY_LOGGED_IN'))
        throw tokenFailure(error, 'log in', this.#config.tokenLabel);
    }
    this.#idle.push(session);
  }

  /** Forgets every session and cached handle; the next operation connects afresh. */
  #reset(): void {
    for (const s of this.#all) {
      try {
        this.#module.C_CloseSession(s);
      } catch {
        // Already gone with the token.
      }
    }
    this.#all.clear();
    this.#idle = [];
    this.#keys.clear();
    this.#slot = undefined;
  }

  #acquire(): Buffer {
    if (this.#closed) throw fail('unavailable', 'the PKCS#11 key custody is closed');
    if (!this.#slot) this.#connect();
    const idle = this.#idle.pop();
    if (idle) return idle;
    const session = this.#module.C_OpenSession(this.#slot!, P.CKF_SERIAL_SESSION | P.CKF_RW_SESSION);
    this.#all.add(session);
    return session;
  }

  #release(session: Buffer): void {
    if (!this.#all.has(session)) return;
    if (this.#idle.length < (this.#config.sessions ?? 4)) this.#idle.push(session);
    else {
      this.#all.delete(session);
      try {
        this.#module.C_CloseSession(session);
      } catch {
        // Nothing to keep.
      }
    }
  }

  /** Runs `fn` on a pooled session; after a reset error, reconnects and retries once. */
  #withSession<T>(doing: string, fn: (session: Buffer) => T): T {
    for (let attempt = 0; ; attempt++) {
      let session: Buffer | undefined;
      try {
        session = this.#acquire();
        const result = fn(session);
        this.#release(session);
        return result;
      } catch (error) {
        if (attempt === 0 && isResetError(error)) {
          this.#logger?.warn({ token: this.#config.tokenLabel }, 'PKCS#11 session lost; logging in again');
          this.#reset();
          continue;
        }
        if (session) this.#release(session);
        throw tokenFailure(error, doing, this.#config.tokenLabel);
      }
    }
  }

  async #withSessionAsync<T>(doing: string, fn: (session: Buffer) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let session: Buffer | undefined;
      try {
        session = this.#acquire();
        const result = await fn(session);
        this.#release(session);
        return result;
      } catch (error) {
        if (attempt === 0 && isResetError(error)) {
          this.#reset();
          continue;
        }
        if (session) this.#release(session);
        throw tokenFailure(error, doing, this.#config.tokenLabel);
      }
    }
  }

  #find(session: Buffer, template: Pkcs11Js.Template): Buffer[] {
    this.#module.C_FindObjectsInit(session, template);
    try {
      return this.#module.C_FindObjects(session, 64);
    } finally {
      this.#module.C_FindObjectsFinal(session);
    }
  }

  #spkiOf(session: Buffer, publicKey: Buffer): Buffer {
    const [type] = this.#module.C_GetAttributeValue(session, publicKey, [{ type: P.CKA_KEY_TYPE }]);
    // CK_ULONG in host order; key types are small, so the low bytes tell.
    const keyType = (type!.value as Buffer).readUInt32LE(0);
    if (keyType === P.CKK_RSA) {
      const [n, e] = this.#module.C_GetAttributeValue(session, publicKey, [
        { type: P.CKA_MODULUS },
        { type: P.CKA_PUBLIC_EXPONENT },
      ]);
      return createPublicKey({
        key: { kty: 'RSA', n: b64url(n!.value as Buffer), e: b64url(e!.value as Buffer) },
        format: 'jwk',
      }).export({ type: 'spki', format: 'der' });
    }
    const [params, point] = this.#module.C_GetAttributeValue(session, publicKey, [
      { type: P.CKA_EC_PARAMS },
      { type: P.CKA_EC_POINT },
    ]);
    const raw = unwrapPoint(point!.value as Buffer);
    const p = params!.value as Buffer;
    if (keyType === CKK_EC_EDWARDS) {
      return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(raw) }, format: 'jwk' }).export({
        type: 'spki',
        format: 'der',
      });
    }
    const crv = p.equals(CURVE_PARAMS['ECDSA-P256']!)
      ? 'P-256'
      : p.equals(CURVE_PARAMS['ECDSA-P384']!)
        ? 'P-384'
        : null;
    if (!crv || raw[0] !== 0x04)
      throw fail('key_not_allowed', 'the token key is on a curve certwright does not use');
    const size = (raw.length - 1) / 2;
    return createPublicKey({
      key: { kty: 'EC', crv, x: b64url(raw.subarray(1, 1 + size)), y: b64url(raw.subarray(1 + size)) },
      format: 'jwk',
    }).export({ type: 'spki', format: 'der' });
  }

  /** The private and public objects under `label`, resolved once and cached. */
  #key(label: string): TokenKey {
    const cached = this.#keys.get(label);
    if (cached) return cached;
    return this.#withSession('find a key', (session) => {
      const [privateKey] = this.#find(session, [
        { type: P.CKA_CLASS, value: P.CKO_PRIVATE_KEY },
        { type: P.CKA_LABEL, value: label },
      ]);
      const [publicKey] = this.#find(session, [
        { type: P.CKA_CLASS, value: P.CKO_PUBLIC_KEY },
        { type: P.CKA_LABEL, value: label },
      ]);
      if (!privateKey || !publicKey) {
        throw fail('not_found', `no key pair labelled '${label}' on token '${this.#config.tokenLabel}'`);
      }
      const spki = this.#spkiOf(session, publicKey);
      const [extractable] = this.#module.C_GetAttributeValue(session, privateKey, [
        { type: P.CKA_EXTRACTABLE },
      ]);
      const key: TokenKey = {
        privateKey,
        spki,
        algorithm: keyAlgorithmOfSpki(spki),
        extractable: (extractable!.value as Buffer)[0] === 1,
      };
      this.#keys.set(label, key);
      return key;
    });
  }

  async createKey(input: CreateCustodyKey): Promise<CustodyKeyInfo> {
    checkLabel(input.label);
    const algorithm = input.algorithm;
    const rsaBits = /^RSA-(2048|3072|4096)$/.exec(algorithm)?.[1];
    if (!rsaBits && !CURVE_PARAMS[algorithm])
      throw fail('key_not_allowed', `unsupported key algorithm '${String(algorithm)}'`);
    const exists = await this.publicKey(input.label).then(
      () => true,
      () => false,
    );
    if (exists)
      throw fail('duplicate', `a key labelled '${input.label}' exists on token '${this.#config.tokenLabel}'`);
    const id = randomBytes(16);
    const common = [
      { type: P.CKA_TOKEN, value: true },
      { type: P.CKA_LABEL, value: input.label },
      { type: P.CKA_ID, value: id },
    ];
    const mechanism = rsaBits
      ? { mechanism: P.CKM_RSA_PKCS_KEY_PAIR_GEN }
      : { mechanism: algorithm === 'Ed25519' ? CKM_EC_EDWARDS_KEY_PAIR_GEN : P.CKM_EC_KEY_PAIR_GEN };
    const publicTemplate = [
      ...common,
      { type: P.CKA_VERIFY, value: true },
      ...(rsaBits
        ? [
            { type: P.CKA_MODULUS_BITS, value: Number(rsaBits) },
            { type: P.CKA_PUBLIC_EXPONENT, value: Buffer.from([1, 0, 1]) },
          ]
        : [{ type: P.CKA_EC_PARAMS, value: CURVE_PARAMS[algorithm]! }]),
    ];
    const privateTemplate = [
      ...common,
      { type: P.CKA_PRIVATE, value: true },
      { type: P.CKA_SENSITIVE, value: true },
      { type: P.CKA_EXTRACTABLE, value: input.extractable },
      { type: P.CKA_SIGN, value: true },
    ];
    await this.#withSessionAsync(`generate a ${algorithm} key`, (session) =>
      this.#module.C_GenerateKeyPairAsync(session, mechanism, publicTemplate, privateTemplate),
    );
    this.#keys.delete(input.label);
    const key = this.#key(input.label);
    return { label: input.label, algorithm: key.algorithm, extractable: key.extractable };
  }

  async publicKey(label: string): Promise<Buffer> {
    return Buffer.from(this.#key(label).spki);
  }

  async sign(label: string, mechanism: SignMechanism, data: Uint8Array): Promise<Buffer> {
    return this.#sign(label, mechanism, data);
  }

  #sign(label: string, mechanism: SignMechanism, data: Uint8Array): Buffer {
    const key = this.#key(label);
    assertMechanismFits(label, key.algorithm, mechanism);
    const hash = mechanismHash(mechanism);
    const input = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return this.#withSession(`sign with ${mechanism}`, (session) => {
      // The handle is re-read inside: a reset between lookup and use invalidates it.
      const k = this.#key(label);
      const out = Buffer.alloc(1024);
      if (mechanism.startsWith('ECDSA-')) {
        // Tokens commonly offer raw CKM_ECDSA only: hash here, sign the digest there.
        const digest = createHash(hash!).update(input).digest();
        this.#module.C_SignInit(session, { mechanism: P.CKM_ECDSA }, k.privateKey);
        return ecdsaToDer(this.#module.C_Sign(session, digest, out));
      }
      if (mechanism === 'Ed25519') {
        this.#module.C_SignInit(session, { mechanism: CKM_EDDSA }, k.privateKey);
        return Buffer.from(this.#module.C_Sign(session, input, out));
      }
      const h = HASH_MECH[hash!];
      const m = mechanism.startsWith('RSA-PSS-')
        ? {
            mechanism: h.pss,
            // RFC 8017 §9.1: MGF1 with the message digest and a salt as long as the digest.
            parameter: { type: P.CK_PARAMS_RSA_PSS, hashAlg: h.hash, mgf: h.mgf, saltLen: h.len },
          }
        : { mechanism: h.rsa };
      this.#module.C_SignInit(session, m, k.privateKey);
      return Buffer.from(this.#module.C_Sign(session, input, out));
    });
  }

  async signingKey(label: string): Promise<SigningKey> {
    const key = this.#key(label);
    return { spki: Buffer.from(key.spki), sign: (mechanism, data) => this.#sign(label, mechanism, data) };
  }

  async list(): Promise<CustodyKeyInfo[]> {
    const labels = this.#withSession('list keys', (session) =>
      this.#find(session, [{ type: P.CKA_CLASS, value: P.CKO_PRIVATE_KEY }]).map((h) => {
        const [label] = this.#module.C_GetAttributeValue(session, h, [{ type: P.CKA_LABEL }]);
        return (label!.value as Buffer).toString('utf8');
      }),
    );
    const out: CustodyKeyInfo[] = [];
    for (const label of labels) {
      try {
        const k = this.#key(label);
        out.push({ label, algorithm: k.algorithm, extractable: k.extractable });
      } catch {
        // A private key without its public object, or of a kind certwright does not use.
      }
    }
    return out;
  }

  async destroy(label: string): Promise<void> {
    this.#key(label);
    this.#withSession('destroy a key', (session) => {
      for (const cls of [P.CKO_PRIVATE_KEY, P.CKO_PUBLIC_KEY]) {
        for (const h of this.#find(session, [
          { type: P.CKA_CLASS, value: cls },
          { type: P.CKA_LABEL, value: label },
        ]))
          this.#module.C_DestroyObject(session, h);
      }
    });
    this.#keys.delete(label);
  }

  async ready(): Promise<boolean> {
    try {
      this.#withSession('check the session', (session) => {
        const info = this.#module.C_GetSessionInfo(session);
        // A session whose login was lost reads as a public session: log in again.
        if (info.state !== CKS_RW_USER_FUNCTIONS && info.state !== CKS_RO_USER_FUNCTIONS) {
          throw Object.assign(new Error('CKR_USER_NOT_LOGGED_IN'), {});
        }
      });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.#teardown(false);
  }

  #teardown(failedOpen: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    const [any] = this.#all;
    if (any && !failedOpen) {
      try {
        this.#module.C_Logout(any);
      } catch {
        // Logged out already.
      }
    }
    this.#reset();
    try {
      this.#module.C_Finalize();
    } catch {
      // Another user of the module in this process may have finalised it.
    }
    try {
      this.#module.close();
    } catch {
      // Nothing left to release.
    }
  }
}
