import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CertificateVersion,
  createServices,
  defaultIssuerConnectors,
  IssuerConnectorCache,
  ManualClock,
  RevocationStatusService,
  SecretBox,
  type ServiceDeps,
  type Services,
  type Storage,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import { createPgliteStorage, createPostgresStorage } from '@certwright/storage-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempDatabase, postgresSkipReason } from '../../storage-pg/test/helpers.js';

/**
 * CRL numbers never lie (RFC 5280 §5.2.3): of two CRLs of one issuer, the one with the higher
 * number lists every revocation the other lists. Two builders (as two instances on one
 * database) race while a revocation commits between them; builder A is held after it has read
 * the revoked entries, which is where an unlocked build would go wrong: B reads after the
 * revocation and numbers first, A numbers after it with its older list.
 */

const dir = mkdtempSync(join(tmpdir(), 'cw-crl-number-'));
const clock = new ManualClock('2026-03-01T00:00:00Z');
const secretBox = new SecretBox(SecretBox.generateKey());
/**
 * How long the test lets the revocation and builder B try to run while A is held. Only an
 * opportunity for a broken build to show itself; no assertion depends on how long anything took.
 */
const RACE_WINDOW_MS = 300;
const pgSkip = await postgresSkipReason();
if (pgSkip) console.warn(`[crl numbers] skipping the PostgreSQL run: ${pgSkip}`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the test needs of a storage: the port, and its migrations (which seed the baseline). */
type SqlStorage = Storage & { migrate(): Promise<unknown> };

interface App {
  services: Services;
  storage: SqlStorage;
  issuerId: string;
  issue(): Promise<{ id: string; version: CertificateVersion }>;
}

async function createApp(storage: SqlStorage): Promise<App> {
  await storage.migrate();
  const services = createServices({ storage, clock, logger: silentLogger });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'CRL owner', email: 'crl@example.test' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'CRL team' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'CRL number CA', type: 'Local' });
  return {
    services,
    storage,
    issuerId: issuer.id,
    async issue() {
      const cert = await services.certificates.create(SYSTEM_ACTOR, {
        name: `crl-${randomBytes(4).toString('hex')}`,
        common_name: 'crl.example.test',
        renewal_policy_id: 'rp-default',
        profile_id: 'prof-default',
        issuer_id: issuer.id,
        owner_id: owner.id,
        team_id: team.id,
      });
      await services.pki.lifecycle.processDueJobs();
      const got = await services.certificates.get(cert.id);
      return { id: cert.id, version: (await storage.versions.get(got.current_version_id!))! };
    },
  };
}

/** Storage whose revoked-entry reads (in and outside transactions) pause once the gate is armed. */
function gatedStorage(storage: Storage) {
  let armed = false;
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const atGate = new Promise<void>((r) => {
    reached = r;
  });
  const wrap = (s: Storage): Storage =>
    new Proxy(s, {
      get(target, prop, receiver) {
        if (prop === 'transaction') {
          return <T>(fn: (tx: Storage) => Promise<T>) => target.transaction((tx) => fn(wrap(tx)));
        }
        if (prop === 'versions') {
          const versions = target.versions;
          return new Proxy(versions, {
            get(v, name, r) {
              if (name !== 'streamCrlEntryBlocks') return Reflect.get(v, name, r);
              return async function* (issuerId: string, pageSize?: number) {
                for await (const block of v.streamCrlEntryBlocks(issuerId, pageSize)) yield block;
                if (armed) {
                  armed = false;
                  reached();
                  await released;
                }
              };
            },
          });
        }
        return Reflect.get(target, prop, receiver);
      },
    });
  return {
    storage: wrap(storage),
    arm: () => {
      armed = true;
    },
    atGate,
    release: () => release(),
  };
}

function builder(storage: Storage): RevocationStatusService {
  const deps: ServiceDeps = { storage, clock, logger: silentLogger };
  return new RevocationStatusService(
    deps,
    new IssuerConnectorCache(deps, defaultIssuerConnectors(), undefined),
  );
}

/** CRL number and listed serials, as openssl reads them. */
function readCrl(name: string, der: Buffer): { number: bigint; serials: Set<string> } {
  const path = join(dir, name);
  writeFileSync(path, der);
  const text = execFileSync('openssl', ['crl', '-inform', 'DER', '-in', path, '-noout', '-text'], {
    encoding: 'utf8',
  });
  const number = /X509v3 CRL Number:\s*\n\s*(\S+)/.exec(text)![1]!;
  const serials = [...text.matchAll(/Serial Number: ([0-9A-F]+)/g)].map((m) =>
    m[1]!.toLowerCase().replace(/^0+(?=.)/, ''),
  );
  // openssl prints the CRL number in decimal, or in hex with a 0x prefix when it is large.
  return { number: BigInt(number), serials: new Set(serials) };
}

function describeCrlNumbers(
  name: string,
  open: () => Promise<{ storage: SqlStorage; close(): Promise<void> }>,
  skip?: string,
) {
  describe.skipIf(skip !== undefined)(`CRL numbers on ${name}`, { timeout: 120_000 }, () => {
    let app: App;
    let close: () => Promise<void>;
    beforeAll(async () => {
      const opened = await open();
      close = opened.close;
      app = await createApp(opened.storage);
    }, 120_000);
    afterAll(() => close?.());

    it('never put an older revocation list under a higher number when builders race a revocation', async () => {
      const first = await app.issue();
      const second = await app.issue();
      await app.services.certificates.revoke(SYSTEM_ACTOR, first.id, 'keyCompromise');

      const gated = gatedStorage(app.storage);
      const a = builder(gated.storage);
      const b = builder(app.storage);
      gated.arm();
      const built: { by: string; der: Buffer }[] = [];
      const aDone = a.currentCrl(app.issuerId).then((s) => built.push({ by: 'A', der: s!.der }));
      await gated.atGate;
      // While A holds its list: a revocation commits, then B builds.
      const revoked = app.services.certificates.revoke(SYSTEM_ACTOR, second.id, 'superseded');
      const bDone = revoked
        .then(() => b.currentCrl(app.issuerId))
        .then((s) => built.push({ by: 'B', der: s!.der }));
      await Promise.race([Promise.all([revoked, bDone]), new Promise((r) => setTimeout(r, RACE_WINDOW_MS))]);
      gated.release();
      await Promise.all([aDone, revoked, bDone]);
      // And what the service itself publishes after all of it.
      built.push({
        by: 'service',
        der: (await app.services.pki.revocationStatus.currentCrl(app.issuerId))!.der,
      });

      const crls = built.map((c, i) => ({ by: c.by, ...readCrl(`${name}-${i}.crl`, c.der) }));
      const numbers = crls.map((c) => c.number);
      expect(new Set(numbers).size).toBe(numbers.length);
      const serialOf = (v: CertificateVersion) => v.serial_number.toLowerCase().replace(/^0+(?=.)/, '');
      for (const crl of crls) expect(crl.serials.has(serialOf(first.version)), crl.by).toBe(true);
      for (const low of crls) {
        for (const high of crls) {
          if (high.number <= low.number) continue;
          for (const serial of low.serials) {
            expect(
              high.serials.has(serial),
              `${high.by} (${high.number}) lacks ${serial} of ${low.by} (${low.number})`,
            ).toBe(true);
          }
        }
      }
      // B read after the revocation committed, so its list has it; so does the highest number.
      const highest = crls.reduce((x, y) => (y.number > x.number ? y : x));
      expect(crls.find((c) => c.by === 'B')!.serials.has(serialOf(second.version))).toBe(true);
      expect(highest.serials.has(serialOf(second.version))).toBe(true);
    });

    it("keeps the issuer's updated_at (and every cached connector) when a CRL is numbered", async () => {
      const before = await app.storage.issuers.require(app.issuerId);
      clock.advance(60_000);
      const crl = await builder(app.storage).currentCrl(app.issuerId);
      expect(crl).not.toBeNull();
      const after = await app.storage.issuers.require(app.issuerId);
      expect(after.updated_at.toISOString()).toBe(before.updated_at.toISOString());
      const stored = await app.storage.issuers.getWithConfig(app.issuerId);
      expect(stored!.config.crl_number).toBe(crl!.crlNumber.toString());
    });
  });
}

describeCrlNumbers('PGlite', async () => {
  const storage = await createPgliteStorage({ memory: true }, { secretBox, clock });
  return { storage, close: () => storage.close() };
});

describeCrlNumbers(
  'PostgreSQL',
  async () => {
    const temp = await createTempDatabase();
    const storage = createPostgresStorage(temp.url, { secretBox, clock, maxConnections: 8 });
    return {
      storage,
      close: async () => {
        await storage.close();
        await temp.drop();
      },
    };
  },
  pgSkip,
);
