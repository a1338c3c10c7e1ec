import { randomUUID } from 'node:crypto';
import type { CertificateVersion, RevocationReason } from '../domain/certificate.js';
import { notFound } from '../errors.js';
import type { IssuerConnector } from '../issuers/connector.js';
import { buildCertId, certIdMatcher, type OcspCertId, type OcspRequest } from '../pki/ocsp-request.js';
import { buildOcspResponse, type OcspCertStatus, type OcspSingleResponse } from '../pki/ocsp-response.js';
import type { EphemeralStore } from '../ports/ephemeral.js';
import type { ServiceDeps } from './context.js';
import type { CrlPublications } from './crl-publishing/publications.js';
import type { IssuerConnectorCache } from './issuance.js';
import { reportOutcome } from './outcomes.js';
import type { RevocationEvent } from './revocation.js';

/**
 * Revocation status publishing for issuers the service signs for (the Local CA): CRLs and OCSP
 * answers, each served from an in-process cache. A committed revocation refreshes both caches
 * before the revoke call returns (this service is a RevocationListener), so a relying party
 * asking right after sees the revocation.
 *
 * Several instances: after each committed revocation the revoking instance also writes a new
 * random **revocation generation** token per issuer to the shared EphemeralStore
 * (`deps.ephemeral`; Redis when instances share a database). Before serving from its cache,
 * every instance reads that token (a read started after the request arrived, shared by the
 * requests that arrived meanwhile: see #syncShared) and drops its cached CRL and OCSP answers
 * of the issuer when the token differs from the one its cache was built under.
 * The token is read before storage is, so a cache entry is never newer than its token.
 * Trade-off: a round trip to the store in every request's path (sub-millisecond on loopback
 * Redis, next to the TLS and HTTP work of the request) buys cross-instance freshness right after the
 * revoke call returns; a short local TTL on the comparison would save it at the price of
 * staleness for that TTL. If the store is unreachable, instances fall back to their local
 * caches (bounded by `crlRefreshMs` / `ocspValidityMs`) rather than rebuild on every request;
 * so does a revocation whose process died between commit and the token write.
 */

export interface CrlSnapshot {
  der: Buffer;
  crlNumber: bigint;
  thisUpdate: Date;
  nextUpdate: Date;
}

/** A delta CRL (RFC 5280 §5.2.4) and the number of the complete CRL it is relative to. */
export interface DeltaCrlSnapshot extends CrlSnapshot {
  baseCrlNumber: bigint;
}

export interface OcspAnswer {
  der: Buffer;
  producedAt: Date;
  nextUpdate?: Date;
}

export interface SerialStatusReport {
  serial: string;
  status: OcspCertStatus['status'];
  revokedAt?: Date;
  reason?: CertificateVersion['revocation_reason'] & string;
  thisUpdate: Date;
  nextUpdate: Date;
}

export interface RevocationStatusOptions {
  /** nextUpdate − thisUpdate of each CRL; default 24 h. */
  crlValidityMs?: number;
  /** A cached CRL is rebuilt once it is this old even without a revocation; default 1 h. */
  crlRefreshMs?: number;
  /** nextUpdate − thisUpdate of each OCSP answer and its cache lifetime; default 1 h. */
  ocspValidityMs?: number;
  /** Cached OCSP answers per issuer; the oldest go first. Default 10,000. */
  ocspCacheEntries?: number;
  /**
   * Known serial statuses (good or revoked) kept per issuer for freshly signed answers (a
   * nonce per request), so those do not read storage each time; the oldest go first.
   * Default 100,000 (a few MB).
   */
  ocspStatusEntries?: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Ephemeral key of an issuer's revocation generation token. */
export const revocationGenerationKey = (issuerId: string) => `revocation-generation:${issuerId}`;
/** Sentinel: this process has not read the shared token yet. */
const UNSEEN = Symbol('unseen');
/** Listed in SERVICE_MANAGED_CONFIG_KEYS, so issuer updates keep it. */
const CRL_NUMBER_KEY = 'crl_number';
/** Revoked entries read per statement while building a CRL. */
const CRL_READ_PAGE = 50_000;
/**
 * A delta lists what was revoked since its base's thisUpdate less this margin: a revocation
 * stamped just before the base was built but committed after the base read its entries is in
 * neither otherwise. Listing an entry the base already has is harmless (RFC 5280 §5.2.4 lets a
 * relying party take the union).
 */
const DELTA_OVERLAP_MS = 5 * 60_000;

/**
 * CRL numbers must increase monotonically (RFC 5280 §5.2.3), across restarts and instances.
 * The last number is kept in the issuer's sealed config; the next is the larger of last + 1
 * and the current time in milliseconds, so numbers keep rising after a config restored from
 * an old backup.
 */
function nextCrlNumber(stored: unknown, now: Date): bigint {
  const last = typeof stored === 'string' && /^\d{1,40}$/.test(stored) ? BigInt(stored) : 0n;
  const byTime = BigInt(now.getTime());
  return last + 1n > byTime ? last + 1n : byTime;
}

interface IssuerState {
  /** Bumped by every refresh; a CRL built for an older generation is stale. */
  generation: number;
  /** The shared token the caches were last validated against (undefined: no token stored). */
  shared: string | undefined | typeof UNSEEN;
  crl?: { generation: number; snapshot: CrlSnapshot };
  building?: { generation: number; promise: Promise<CrlSnapshot> };
  /** The delta CRL, built under `generation` against the base numbered `snapshot.baseCrlNumber`. */
  delta?: { generation: number; snapshot: DeltaCrlSnapshot };
  deltaBuilding?: { generation: number; baseCrlNumber: bigint; promise: Promise<DeltaCrlSnapshot> };
  ocsp: Map<string, CachedAnswer>;
  /**
   * The same answers by the exact bytes of requests (without nonce) that were answered with
   * them, so a repeated request is served without being parsed again (see `knownAnswer`).
   */
  byRequest: Map<string, CachedAnswer>;
  /** The shared-token read in flight, and the one queued behind it (see `#syncShared`). */
  reading?: Promise<void>;
  queued?: Promise<void>;
  /**
   * Serial → status read from storage under the current generation, with the time it stops
   * being trusted. Only good and revoked are kept: an unknown serial may be issued any moment
   * (issuance does not bump the generation), a known one changes only by revocation, which
   * clears this map like the answer cache.
   */
  statuses: Map<string, { status: OcspCertStatus; until: number }>;
}

type CachedAnswer = OcspAnswer & { nextUpdate: Date };

/** Requests up to this size are remembered by their bytes; larger ones (several CertIDs, signed) are parsed each time. */
const MAX_REMEMBERED_REQUEST_BYTES = 1024;

/**
 * The answer-cache key of a request without nonce: its CertIDs' DER, in order. DER encodings
 * carry their own lengths, so the concatenation of two different lists never coincides.
 */
function certIdsKey(certIds: readonly OcspCertId[]): string {
  let key = '';
  for (const c of certIds) key += bytesKey(c.der);
  return key;
}

/** Bytes as a string of the same length (one character per byte), for Map keys. */
const bytesKey = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/** A cached answer may be served from its producedAt until (not including) its nextUpdate. */
const stands = (answer: CachedAnswer, nowMs: number): boolean =>
  answer.nextUpdate.getTime() > nowMs && answer.producedAt.getTime() <= nowMs;

/** Map.set that first evicts the oldest entry when the map is full (insertion order). */
function boundedSet<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  if (!map.has(key) && map.size >= limit) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
}

export class RevocationStatusService {
  readonly #states = new Map<string, IssuerState>();
  readonly #matchers = new WeakMap<IssuerConnector, (certId: OcspCertId) => boolean>();
  readonly #options: Required<RevocationStatusOptions>;
  /**
   * Lifetime of a generation token: it must outlive every cache entry (an expired token reads
   * as absent, and a cache built while it was absent must not look current again).
   */
  readonly #tokenTtlMs: number;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly connectors: IssuerConnectorCache,
    options: RevocationStatusOptions = {},
    /** Where regenerated CRLs are published besides the routes; absent: nowhere. */
    readonly publications?: CrlPublications,
  ) {
    this.#options = {
      crlValidityMs: options.crlValidityMs ?? 24 * HOUR,
      crlRefreshMs: options.crlRefreshMs ?? HOUR,
      ocspValidityMs: options.ocspValidityMs ?? HOUR,
      ocspCacheEntries: options.ocspCacheEntries ?? 10_000,
      ocspStatusEntries: options.ocspStatusEntries ?? 100_000,
    };
    this.#tokenTtlMs = Math.max(
      7 * DAY,
      2 * Math.max(this.#options.crlRefreshMs, this.#options.ocspValidityMs),
    );
  }

  /** The revocation listener: drops OCSP answers and rebuilds the CRL of each issuer. */
  readonly onRevoked = async (event: RevocationEvent): Promise<void> => {
    await this.refresh(event.issuer_ids);
  };

  async refresh(issuerIds: readonly string[]): Promise<void> {
    for (const id of issuerIds) {
      const token = await this.#publishGeneration(id);
      const state = this.#state(id);
      this.#invalidate(state);
      // Our own token needs no second invalidation; when another instance won the write we
      // leave the old one and the next request re-syncs (one extra rebuild at most).
      if (token !== undefined) state.shared = token;
    }
    // Rebuild now, so the first CRL fetch after a revocation is both fresh and fast. With
    // deltas the base stands (relying parties keep it) and the delta carries the revocation.
    for (const id of issuerIds) {
      await this.currentCrl(id);
      await this.currentDeltaCrl(id);
    }
  }

  #state(issuerId: string): IssuerState {
    let state = this.#states.get(issuerId);
    if (!state) {
      state = { generation: 0, shared: UNSEEN, ocsp: new Map(), byRequest: new Map(), statuses: new Map() };
      this.#states.set(issuerId, state);
    }
    return state;
  }

  /**
   * Writes a fresh random generation token for the issuer; returns it, or undefined when
   * another instance wrote its own in between or the store failed (logged: the revocation has
   * committed and this instance's caches are refreshed regardless).
   */
  async #publishGeneration(issuerId: string): Promise<string | undefined> {
    const store = this.deps.ephemeral;
    if (!store) return undefined;
    const key = revocationGenerationKey(issuerId);
    const token = randomUUID();
    try {
      // No "set" in the port: delete + putIfAbsent. Any value that differs from the one a
      // cache saw invalidates it, so losing the race to another revoker is as good as winning.
      await store.delete(key);
      return (await store.putIfAbsent(key, token, this.#tokenTtlMs)) ? token : undefined;
    } catch (error) {
      this.deps.logger.warn(
        { err: error, issuer_id: issuerId },
        'could not publish the revocation generation; other instances refresh CRL/OCSP on expiry only',
      );
      return undefined;
    }
  }

  /** A new generation: every cached answer, remembered request and known status of the issuer goes. */
  #invalidate(state: IssuerState): void {
    state.generation += 1;
    state.ocsp.clear();
    state.byRequest.clear();
    state.statuses.clear();
  }

  /**
   * Drops the issuer's caches when another instance revoked since they were built. Each request
   * needs a read of the token that started after it arrived (a revocation that returned before
   * the request must show), but not a read of its own: a read already in flight may have
   * started before this request came, so the request waits for the next read, which every
   * request arriving in the meantime shares; it starts once the one in flight is done. Under load
   * that is one store round trip per round trip's worth of requests per issuer instead of one per
   * request, and never a staler answer. A request that finds no read in flight starts one at once.
   * (Spacing the reads by a timer was measured and dropped: the wait left the server idle,
   * docs/api/lifecycle.md, OCSP.)
   */
  #syncShared(issuerId: string, state: IssuerState): Promise<void> | undefined {
    const store = this.deps.ephemeral;
    if (!store) return undefined;
    if (state.queued) return state.queued;
    const inFlight = state.reading;
    if (!inFlight) return this.#startRead(store, issuerId, state);
    const queued = inFlight.then(() => {
      if (state.queued === queued) state.queued = undefined;
      return this.#startRead(store, issuerId, state);
    });
    state.queued = queued;
    return queued;
  }

  #startRead(store: EphemeralStore, issuerId: string, state: IssuerState): Promise<void> {
    const read = this.#readShared(store, issuerId, state);
    state.reading = read;
    void read.then(() => {
      if (state.reading === read) state.reading = undefined;
    });
    return read;
  }

  /** One read of the shared token; never rejects (an unreadable store leaves the caches as they are). */
  async #readShared(store: EphemeralStore, issuerId: string, state: IssuerState): Promise<void> {
    let token: string | undefined;
    try {
      token = await store.get(revocationGenerationKey(issuerId));
    } catch (error) {
      this.deps.logger.warn(
        { err: error, issuer_id: issuerId },
        'revocation generation unreadable; serving from the local cache',
      );
      return;
    }
    if (token === state.shared) return;
    state.shared = token;
    this.#invalidate(state);
  }

  async #signer(issuerId: string) {
    const connector = await this.connectors.get(issuerId);
    return connector?.revocationSigner ? { connector, signer: connector.revocationSigner } : null;
  }

  /** The CA certificate the issuer signs with (the caIssuers target); null as for {@link currentCrl}. */
  async caCertificate(issuerId: string): Promise<{ der: Uint8Array; notAfter: Date } | null> {
    const found = await this.#signer(issuerId);
    if (!found) return null;
    const { der, notAfter } = found.signer.certificate;
    return { der, notAfter };
  }

  /**
   * The issuer's current complete CRL; null when the issuer does not exist or the service does
   * not sign for it. Without deltas a revocation rebuilds it; with deltas (the issuer's
   * `delta_crl`) it is rebuilt on its own schedule only, so that relying parties' cached copies
   * stay the base of the deltas, and revocations since show in {@link currentDeltaCrl}.
   */
  async currentCrl(issuerId: string): Promise<CrlSnapshot | null> {
    const state = this.#state(issuerId);
    await this.#syncShared(issuerId, state);
    const found = await this.#signer(issuerId);
    if (!found) {
      this.#states.delete(issuerId);
      return null;
    }
    const schedule = found.signer.deltaCrl;
    const refreshMs = schedule?.baseIntervalMs ?? this.#options.crlRefreshMs;
    const current = (generation: number) => schedule !== undefined || generation === state.generation;
    const now = this.deps.clock.now();
    const cached = state.crl;
    if (
      cached &&
      current(cached.generation) &&
      now.getTime() - cached.snapshot.thisUpdate.getTime() < refreshMs &&
      now.getTime() >= cached.snapshot.thisUpdate.getTime()
    ) {
      return cached.snapshot;
    }
    if (state.building && current(state.building.generation)) return state.building.promise;
    const generation = state.generation;
    const promise = this.#buildCrl(issuerId, found.signer);
    state.building = { generation, promise };
    try {
      const snapshot = await promise;
      this.#publish(issuerId, 'crl', snapshot, found.signer);
      // Numbers and contents rise together (see #numberedEntries): of two builds, the
      // higher-numbered one read its entries last, so it is at least as fresh as the other
      // whichever generation each started in. Keep it, and never answer a lower number than
      // one this instance already served.
      const kept = state.crl;
      if (!kept || kept.snapshot.crlNumber < snapshot.crlNumber) {
        state.crl = { generation: Math.max(generation, kept?.generation ?? generation), snapshot };
      } else if (kept.generation < generation) {
        kept.generation = generation;
      }
      return state.crl!.snapshot;
    } finally {
      if (state.building?.promise === promise) state.building = undefined;
    }
  }

  /**
   * The issuer's current delta CRL (RFC 5280 §5.2.4): what was revoked since the complete CRL
   * this instance serves, numbered from the same sequence and carrying that CRL's number in its
   * Delta CRL Indicator. Rebuilt on every revocation and every `delta_crl.interval`. Null when
   * the issuer is unknown, not signed for here, or publishes no deltas.
   */
  async currentDeltaCrl(issuerId: string): Promise<DeltaCrlSnapshot | null> {
    const base = await this.currentCrl(issuerId);
    if (!base) return null;
    const found = await this.#signer(issuerId);
    const schedule = found?.signer.deltaCrl;
    if (!found || !schedule) return null;
    const state = this.#state(issuerId);
    const now = this.deps.clock.now().getTime();
    const cached = state.delta;
    if (
      cached &&
      cached.generation === state.generation &&
      cached.snapshot.baseCrlNumber === base.crlNumber &&
      now - cached.snapshot.thisUpdate.getTime() < schedule.intervalMs &&
      now >= cached.snapshot.thisUpdate.getTime()
    ) {
      return cached.snapshot;
    }
    const pending = state.deltaBuilding;
    if (pending && pending.generation === state.generation && pending.baseCrlNumber === base.crlNumber) {
      return pending.promise;
    }
    const generation = state.generation;
    const promise = this.#buildDelta(issuerId, found.signer, base, schedule.intervalMs);
    state.deltaBuilding = { generation, baseCrlNumber: base.crlNumber, promise };
    try {
      const snapshot = await promise;
      this.#publish(issuerId, 'delta', snapshot, found.signer);
      const kept = state.delta;
      if (!kept || kept.snapshot.crlNumber < snapshot.crlNumber) state.delta = { generation, snapshot };
      return state.delta!.snapshot;
    } finally {
      if (state.deltaBuilding?.promise === promise) state.deltaBuilding = undefined;
    }
  }

  /**
   * Reports a freshly built CRL (the server's CRL gauges) and hands it to the publisher, off
   * the caller's path (see CrlPublications).
   */
  #publish(
    issuerId: string,
    kind: 'crl' | 'delta',
    snapshot: CrlSnapshot,
    signer: NonNullable<IssuerConnector['revocationSigner']>,
  ): void {
    reportOutcome(this.deps, {
      kind: 'crl_built',
      issuerId,
      crl: kind,
      bytes: snapshot.der.length,
      thisUpdate: snapshot.thisUpdate,
      nextUpdate: snapshot.nextUpdate,
    });
    if (!this.publications) return;
    void this.publications.enqueue({
      issuerId,
      kind,
      der: snapshot.der,
      crlNumber: snapshot.crlNumber,
      thisUpdate: snapshot.thisUpdate,
      nextUpdate: snapshot.nextUpdate,
      caCertificate: signer.certificate.der,
    });
  }

  async #buildDelta(
    issuerId: string,
    signer: NonNullable<IssuerConnector['revocationSigner']>,
    base: CrlSnapshot,
    intervalMs: number,
  ): Promise<DeltaCrlSnapshot> {
    const since = new Date(base.thisUpdate.getTime() - DELTA_OVERLAP_MS);
    // Same snapshot rule as the base (see #numberedEntries): entries and number under one lock.
    const { entries, crlNumber, thisUpdate } = await this.deps.storage.transaction(async (tx) => {
      await tx.issuers.lockForUpdate(issuerId);
      const issuer = await tx.issuers.getWithConfig(issuerId);
      if (!issuer) throw notFound('issuer', issuerId);
      const entries: NonNullable<Parameters<typeof signer.signCrl>[0]['entries']>[number][] = [];
      for await (const page of tx.versions.streamRevokedEntries(issuerId, CRL_READ_PAGE, {
        revokedSince: since,
      })) {
        for (const e of page) {
          entries.push({
            serial: e.serial_number,
            revokedAt: e.revoked_at,
            ...(e.revocation_reason ? { reason: e.revocation_reason as RevocationReason } : {}),
            ...(e.invalidity_date ? { invalidityDate: e.invalidity_date } : {}),
          });
        }
      }
      const thisUpdate = this.deps.clock.now();
      const crlNumber = nextCrlNumber(issuer.config[CRL_NUMBER_KEY], thisUpdate);
      await tx.issuers.updateConfigState(issuerId, {
        ...issuer.config,
        [CRL_NUMBER_KEY]: crlNumber.toString(),
      });
      return { entries, crlNumber, thisUpdate };
    });
    const nextUpdate = new Date(thisUpdate.getTime() + intervalMs);
    const der = signer.signCrl({
      thisUpdate,
      nextUpdate,
      crlNumber,
      entries,
      deltaBaseCrlNumber: base.crlNumber,
    });
    return { der, crlNumber, thisUpdate, nextUpdate, baseCrlNumber: base.crlNumber };
  }

  async #buildCrl(
    issuerId: string,
    signer: NonNullable<IssuerConnector['revocationSigner']>,
  ): Promise<CrlSnapshot> {
    const { encodedEntries, crlNumber, thisUpdate } = await this.#numberedEntries(issuerId);
    const nextUpdate = new Date(thisUpdate.getTime() + this.#options.crlValidityMs);
    const der = signer.signCrl({ thisUpdate, nextUpdate, crlNumber, encodedEntries });
    return { der, crlNumber, thisUpdate, nextUpdate };
  }

  /**
   * The revoked entries and the CRL number that goes with them, taken in one snapshot: one
   * transaction holding the issuer's row lock reads the entries and allocates the number. Two
   * builders (threads of one instance, or instances) therefore run one after the other here,
   * and the later one reads the entries after the earlier one committed its number, so a
   * higher number never carries an older list (the revoked set only grows). Reading before
   * allocating, as an unlocked build would, lets a builder that read first publish the higher
   * number. The lock is the issuer's own (`lockForUpdate` writes nothing); the number is stored
   * with `updateConfigState`, which leaves `updated_at` — and with it every instance's cached
   * connector — alone. The entries come as stored DER (`streamCrlEntryBlocks`, which stores
   * the DER of versions revoked since the last build in this same transaction), so the lock
   * covers reading bytes, not encoding them; signing happens after the commit.
   */
  async #numberedEntries(
    issuerId: string,
  ): Promise<{ encodedEntries: Uint8Array[]; crlNumber: bigint; thisUpdate: Date }> {
    return this.deps.storage.transaction(async (tx) => {
      await tx.issuers.lockForUpdate(issuerId);
      const issuer = await tx.issuers.getWithConfig(issuerId);
      if (!issuer) throw notFound('issuer', issuerId);
      const encodedEntries: Uint8Array[] = [];
      for await (const block of tx.versions.streamCrlEntryBlocks(issuerId, CRL_READ_PAGE)) {
        encodedEntries.push(block);
      }
      const thisUpdate = this.deps.clock.now();
      const crlNumber = nextCrlNumber(issuer.config[CRL_NUMBER_KEY], thisUpdate);
      await tx.issuers.updateConfigState(issuerId, {
        ...issuer.config,
        [CRL_NUMBER_KEY]: crlNumber.toString(),
      });
      return { encodedEntries, crlNumber, thisUpdate };
    });
  }

  #matcher(connector: IssuerConnector): (certId: OcspCertId) => boolean {
    let m = this.#matchers.get(connector);
    if (!m) {
      m = certIdMatcher(connector.revocationSigner!.certificate);
      this.#matchers.set(connector, m);
    }
    return m;
  }

  async #status(
    issuerId: string,
    serial: string,
  ): Promise<{ status: OcspCertStatus; version: CertificateVersion | null }> {
    const version = await this.deps.storage.versions.findBySerial(issuerId, serial);
    if (!version) return { status: { status: 'unknown' }, version };
    if (version.revoked_at) {
      return {
        status: {
          status: 'revoked',
          revokedAt: version.revoked_at,
          ...(version.revocation_reason ? { reason: version.revocation_reason } : {}),
        },
        version,
      };
    }
    return { status: { status: 'good' }, version };
  }

  /**
   * Answers an OCSP request for one issuer; null when the issuer is unknown or the service does
   * not sign for it. CertIDs of other CAs, unsupported hashes and unknown serials are `unknown`.
   * Requests without a nonce are answered from the cache until nextUpdate; given the request's
   * `encoded` bytes, the answer is also remembered under them for {@link knownAnswer}.
   */
  async respond(issuerId: string, request: OcspRequest, encoded?: Uint8Array): Promise<OcspAnswer | null> {
    const found = await this.#signer(issuerId);
    if (!found) return null;
    const state = this.#state(issuerId);
    const now = this.deps.clock.now();
    const nowMs = now.getTime();
    const key = request.nonce ? undefined : certIdsKey(request.certIds);
    // Both the answer cache and the status index must reflect other instances' revocations.
    await this.#syncShared(issuerId, state);
    if (key !== undefined) {
      const hit = state.ocsp.get(key);
      if (hit && stands(hit, nowMs)) {
        this.#remember(state, encoded, hit);
        return hit;
      }
    }
    const generation = state.generation;
    const matches = this.#matcher(found.connector);
    const nextUpdate = new Date(nowMs + this.#options.ocspValidityMs);
    const responses: OcspSingleResponse[] = [];
    for (const certId of request.certIds) {
      const certStatus = matches(certId)
        ? await this.#indexedStatus(issuerId, state, certId.serialNumber, nowMs)
        : ({ status: 'unknown' } as const);
      responses.push({ certId, certStatus, thisUpdate: now, nextUpdate });
    }
    const responder = await found.signer.ocspResponder(now);
    const der = buildOcspResponse({
      responder,
      producedAt: now,
      responses,
      ...(request.nonce ? { nonce: request.nonce } : {}),
    });
    const answer = { der, producedAt: now, nextUpdate };
    // A revocation that committed while we looked up statuses bumped the generation: don't
    // cache an answer that may predate it.
    if (key !== undefined && state.generation === generation) {
      boundedSet(state.ocsp, key, answer, this.#options.ocspCacheEntries);
      this.#remember(state, encoded, answer);
    }
    return answer;
  }

  /** Keeps `answer` under the request bytes it answers (small requests only); the caller checked the generation. */
  #remember(state: IssuerState, encoded: Uint8Array | undefined, answer: CachedAnswer): void {
    if (encoded === undefined || encoded.byteLength > MAX_REMEMBERED_REQUEST_BYTES) return;
    boundedSet(state.byRequest, bytesKey(encoded), answer, this.#options.ocspCacheEntries);
  }

  /**
   * The answer given before to these exact request bytes (a request without nonce, see
   * `respond`), while it stands: the issuer still signs here, no revocation since (the shared
   * token is read as for `respond`), before its nextUpdate. Nothing is parsed or looked up in
   * storage. Null when the issuer is unknown; undefined when there is no such answer (then
   * parse the request and call `respond`).
   */
  async knownAnswer(issuerId: string, encoded: Uint8Array): Promise<OcspAnswer | null | undefined> {
    const state = this.#states.get(issuerId);
    if (!state || state.byRequest.size === 0 || encoded.byteLength > MAX_REMEMBERED_REQUEST_BYTES) {
      return undefined;
    }
    // A request never answered before (one with a nonce, say) costs one map lookup, not the checks.
    const key = bytesKey(encoded);
    if (!state.byRequest.has(key)) return undefined;
    const found = await this.#signer(issuerId);
    if (!found) return null;
    await this.#syncShared(issuerId, state);
    const hit = state.byRequest.get(key);
    return hit && stands(hit, this.deps.clock.now().getTime()) ? hit : undefined;
  }

  /**
   * A serial's status from the issuer's index, read from storage on a miss. An entry is
   * trusted for `ocspValidityMs` at most, the same staleness bound as a cached answer when the
   * shared generation cannot be read.
   */
  async #indexedStatus(
    issuerId: string,
    state: IssuerState,
    serial: string,
    nowMs: number,
  ): Promise<OcspCertStatus> {
    const known = state.statuses.get(serial);
    if (known && known.until > nowMs) return known.status;
    const generation = state.generation;
    const { status } = await this.#status(issuerId, serial);
    // Same rule as the answer cache: a revocation committed during the read bumped the generation.
    if (status.status !== 'unknown' && state.generation === generation) {
      boundedSet(
        state.statuses,
        serial,
        { status, until: nowMs + this.#options.ocspValidityMs },
        this.#options.ocspStatusEntries,
      );
    }
    return status;
  }

  /** A signed answer for one serial (SHA-1 CertID, as openssl builds by default). */
  async respondToSerial(issuerId: string, serialHex: string): Promise<OcspAnswer | null> {
    const found = await this.#signer(issuerId);
    if (!found) return null;
    const certId = buildCertId(found.signer.certificate, serialHex, 'sha1');
    return this.respond(issuerId, { certIds: [certId], nonce: undefined, signed: false, extensions: [] });
  }

  /** The status of one serial in plain terms (the human route). */
  async serialStatus(issuerId: string, serialHex: string): Promise<SerialStatusReport | null> {
    const found = await this.#signer(issuerId);
    if (!found) return null;
    const serial = serialHex.toLowerCase().replace(/^0+(?=.)/, '');
    const now = this.deps.clock.now();
    const { status } = await this.#status(issuerId, serial);
    return {
      serial,
      status: status.status,
      ...(status.status === 'revoked'
        ? {
            revokedAt: status.revokedAt,
            ...(status.reason ? { reason: status.reason as SerialStatusReport['reason'] } : {}),
          }
        : {}),
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + this.#options.ocspValidityMs),
    };
  }
}
