import { randomUUID } from 'node:crypto';
import {
  DEFAULT_RENEWAL_POLICY_ID,
  DEFAULT_TENANT_ID,
  SENTINEL_AGENT_IDS,
  SecretBox,
  type Storage,
} from '@certwright/core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countRemaining,
  DEFAULT_OWNER_ID,
  DEFAULT_TEAM_ID,
  SEALED_TABLES,
  type SqlStorage,
} from '../src/index.js';

/** One engine's database, opened again (a restart) with whichever keyring a step names. */
export interface KeyringSubject {
  /** Opens the database (migrated) with `box`; the caller closes it. */
  open(box: SecretBox): Promise<SqlStorage>;
  /** The key the database was created with. */
  key: Uint8Array;
  dispose(): Promise<void>;
}

const PEM_KEY = (i: number) => `-----BEGIN PRIVATE KEY-----\nkey-${i}\n-----END PRIVATE KEY-----\n`;

/** One secret of every kind a repository seals, and how to read each back. */
export async function seedSecrets(s: Storage, tag: string) {
  const issuer = await s.issuers.create({
    name: `iss ${tag}`,
    type: 'Local',
    config: { token: `issuer-${tag}` },
  });
  const versions: string[] = [];
  for (let i = 0; i < 12; i += 1) {
    const { version } = await s.versions.createWithCertificate(
      {
        name: `c-${tag}-${i}`,
        common_name: `c-${tag}-${i}.example.test`,
        owner_id: DEFAULT_OWNER_ID,
        team_id: DEFAULT_TEAM_ID,
        issuer_id: issuer.id,
        renewal_policy_id: DEFAULT_RENEWAL_POLICY_ID,
      },
      {
        issuer_id: issuer.id,
        serial_number: `${tag}${i}`.replace(/[^0-9a-f]/g, 'a'),
        fingerprint_sha256: randomUUID().replace(/-/g, '').padEnd(64, '0'),
        key_algorithm: 'ECDSA',
        key_size: 256,
        subject: 'CN=test',
        issued_at: new Date(),
        not_before: new Date(),
        not_after: new Date(Date.now() + 86_400_000),
        csr_pem: null,
        cert_pem: '-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n',
        chain_pem: '',
        private_key_pem: PEM_KEY(i),
      },
    );
    versions.push(version.id);
  }
  const target = await s.targets.create({
    agent_id: SENTINEL_AGENT_IDS[0],
    name: `t ${tag}`,
    type: 'NGINX',
    config: { password: `target-${tag}` },
  });
  const hook = await s.webhooks.create({
    name: `w ${tag}`,
    url: 'https://hooks.example.test/x',
    headers: { Authorization: `Bearer hook-${tag}` },
  });
  const profile = await s.profiles.create({
    name: `p ${tag}`,
    max_validity_days: 90,
    enrollment_secrets: { est: { password: `est-${tag}` } },
  });
  const fp = (c: string) => c.repeat(64);
  const ra = {
    profile_id: profile.id,
    issuer_id: issuer.id,
    certificate_pem: '-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n',
    not_before: new Date('2026-01-01T00:00:00.000Z'),
    not_after: new Date('2027-01-01T00:00:00.000Z'),
  };
  await s.scepRa.replace(
    {
      ...ra,
      fingerprint_sha256: fp('a'),
      private_key_pem: `ra-a-${tag}`,
      previous_certificate_pem: null,
      previous_private_key_pem: null,
    },
    null,
  );
  await s.scepRa.replace(
    {
      ...ra,
      fingerprint_sha256: fp('b'),
      private_key_pem: `ra-b-${tag}`,
      previous_certificate_pem: ra.certificate_pem,
      previous_private_key_pem: `ra-a-${tag}`,
    },
    fp('a'),
  );
  const oidc = await s.oidcProviders.create({
    tenant_id: DEFAULT_TENANT_ID,
    name: `idp ${tag}`,
    issuer: 'https://idp.example.test',
    client_id: 'certwright',
    client_secret: `oidc-${tag}`,
    scopes: ['openid'],
    groups_claim: 'groups',
    email_claim: 'email',
    name_claim: 'name',
    redirect_uri: 'https://cw.example.test/auth/oidc/callback',
    post_login_url: '/',
    enabled: true,
  });
  const eab = await s.acmeEabKeys.create({
    profile_id: profile.id,
    name: `eab ${tag}`,
    hmac_key: new Uint8Array([1, 2, 3]),
  });

  /** Every secret read back through its repository. */
  return async (r: Storage) => ({
    issuer: (await r.issuers.getWithConfig(issuer.id))?.config,
    versions: await Promise.all(
      versions.map(async (id) => (await r.versions.getWithKey(id))?.private_key_pem),
    ),
    target: (await r.targets.getWithConfig(target.id))?.config,
    hook: (await r.webhooks.getWithHeaders(hook.id))?.headers,
    enrollment: (await r.profiles.getWithSecrets(profile.id))?.secrets,
    ra: await r.scepRa.get(profile.id).then((x) => [x?.private_key_pem, x?.previous_private_key_pem]),
    oidc: (await r.oidcProviders.getWithSecret(oidc.id))?.client_secret,
    eab: await r.acmeEabKeys.getWithKey(eab.id).then((x) => (x ? [...x.hmac_key] : null)),
  });
}

const event = (i: number) => ({
  actor: 'admin',
  actor_type: 'api_key' as const,
  action: 'certificate_created',
  resource_type: 'certificate',
  resource_id: `mc-${i}`,
  category: 'cert_lifecycle' as const,
  details: { i },
});

/**
 * Key rotation on one engine: every sealed column re-sealed under the new key in resumable
 * batches, a stop in the middle resumed after the database is opened again, the old key not
 * needed afterwards, and the audit trail verifying across the rotation.
 */
export function describeKeyringRotation(
  engine: string,
  factory: () => Promise<KeyringSubject | string>,
): void {
  describe(`key rotation on ${engine}`, () => {
    let subject: KeyringSubject | undefined;
    let skip: string | undefined;

    beforeAll(async () => {
      const made = await factory();
      if (typeof made === 'string') skip = made;
      else {
        subject = made;
        // The first open migrates the database: set-up, not any test's work.
        await (await made.open(new SecretBox(made.key))).close();
      }
    }, 120_000);
    afterAll(async () => {
      await subject?.dispose();
    });

    it('lists every sealed column of the schema for the re-seal', async (ctx) => {
      if (skip) return ctx.skip(skip);
      const s = await subject!.open(new SecretBox(subject!.key));
      try {
        const schema = s.flavor === 'mysql' ? sql`database()` : sql`current_schema()`;
        const { rows } = await sql<{ table_name: string; column_name: string }>`
          select table_name as table_name, column_name as column_name from information_schema.columns
          where table_schema = ${schema} and column_name like ${'%\\_sealed'}`.execute(s.db);
        const inSchema = rows.map((r) => `${r.table_name}.${r.column_name}`).sort();
        const listed = SEALED_TABLES.flatMap((t) => t.columns.map((c) => `${t.table}.${c.column}`))
          .filter((name) => name.endsWith('_sealed'))
          .sort();
        expect(listed).toEqual(inSchema);
      } finally {
        await s.close();
      }
    }, 60_000);

    it('re-seals every secret under the new key across a restart, so the old key is no longer needed and the audit trail verifies across the rotation', async (ctx) => {
      if (skip) return ctx.skip(skip);
      const oldKey = subject!.key;
      const newKey = SecretBox.generateKey();
      const before = await subject!.open(new SecretBox(oldKey));
      const readAll = await seedSecrets(before, randomUUID().slice(0, 8));
      // A value in the format of release 2.0.0, which names no key.
      const legacy = await before.issuers.create({
        name: `legacy ${randomUUID()}`,
        type: 'Local',
        config: {},
      });
      await before.db
        .updateTable('issuers')
        .set({
          config_sealed: await new SecretBox(oldKey).seal('{"legacy":true}', `issuer:${legacy.id}:config`),
        })
        .where('id', '=', legacy.id)
        .execute();
      for (let i = 0; i < 3; i += 1) await before.audit.append(event(i));
      const expected = await readAll(before);
      await before.close();

      // The new key seals, the old one still opens; the re-seal stops after three batches.
      const rotating = new SecretBox(newKey, { previous: [oldKey] });
      const first = await subject!.open(rotating);
      const toDo = await countRemaining(first.db, rotating.keyId);
      expect(toDo).toBeGreaterThanOrEqual(22);
      const partial = await first.rekey({ batchSize: 4, maxBatches: 3, actor: 'test' });
      expect(partial.finished).toBe(false);
      expect(partial.progress.resealed).toBeGreaterThan(0);
      expect(await countRemaining(first.db, rotating.keyId)).toBe(toDo - partial.progress.resealed);
      // Every secret opens mid-rotation, whichever key it is under.
      expect(await readAll(first)).toEqual(expected);
      await first.audit.append(event(3));
      await first.close();

      // Opened again (a restart): the run resumes where it stopped.
      const second = await subject!.open(new SecretBox(newKey, { previous: [oldKey] }));
      const seen: number[] = [];
      const done = await second.rekey({ batchSize: 4, onProgress: (p) => seen.push(p.resealed) });
      expect(done.finished).toBe(true);
      expect(done.progress.resealed).toBe(toDo);
      expect(seen[0]).toBeGreaterThan(partial.progress.resealed);
      expect(done.progress.failures).toEqual([]);
      expect(await countRemaining(second.db, keyIdOfBox(newKey))).toBe(0);
      // Asked again, a finished run does nothing.
      expect((await second.rekey()).retiredKeyIds).toEqual([]);
      await second.close();

      // Without the previous key: every secret, the legacy one too, and the whole trail.
      const after = await subject!.open(new SecretBox(newKey));
      try {
        expect(await readAll(after)).toEqual(expected);
        expect((await after.issuers.getWithConfig(legacy.id))?.config).toEqual({ legacy: true });
        await after.audit.append(event(4));
        const verified = await after.audit.verify();
        expect(verified).toMatchObject({ ok: true });
        const actions = (await after.audit.list({ perPage: 500 })).items.map((e) => e.action);
        expect(actions).toContain('encryption_key_rekey_start');
        expect(actions).toContain('encryption_key_rekeyed');
        // New secrets carry the new key's id.
        const fresh = await after.issuers.create({
          name: `after ${randomUUID()}`,
          type: 'Local',
          config: {},
        });
        const row = await after.db
          .selectFrom('issuers')
          .select('config_sealed')
          .where('id', '=', fresh.id)
          .executeTakeFirstOrThrow();
        expect(SecretBox.keyIdOfSealed(row.config_sealed)).toBe(keyIdOfBox(newKey));
      } finally {
        await after.close();
      }
      // The old key alone opens none of it any more.
      const stale = await subject!.open(new SecretBox(oldKey));
      try {
        await expect(stale.issuers.getWithConfig(legacy.id)).rejects.toMatchObject({ code: 'internal' });
      } finally {
        await stale.close();
      }
      subject!.key = newKey;
    }, 120_000);

    it('leaves a value no key of the ring opens as it is, names its row, and finishes only once it is gone', async (ctx) => {
      if (skip) return ctx.skip(skip);
      const current = subject!.key;
      const next = SecretBox.generateKey();
      const s = await subject!.open(new SecretBox(next, { previous: [current] }));
      try {
        const hook = await s.webhooks.create({
          name: `foreign ${randomUUID()}`,
          url: 'https://hooks.example.test/y',
          headers: { A: 'b' },
        });
        const foreign = await new SecretBox(SecretBox.generateKey(), { keyIds: true }).seal(
          '{}',
          `webhook:${hook.id}:headers`,
        );
        await s.db
          .updateTable('webhooks')
          .set({ headers_sealed: foreign })
          .where('id', '=', hook.id)
          .execute();
        const stuck = await s.rekey({ batchSize: 50 });
        expect(stuck.finished).toBe(false);
        expect(stuck.progress.failures).toEqual([
          { table: 'webhooks', key: hook.id, column: 'headers_sealed' },
        ]);
        expect(
          await s.db
            .selectFrom('webhooks')
            .select('headers_sealed')
            .where('id', '=', hook.id)
            .executeTakeFirst(),
        ).toEqual({
          headers_sealed: foreign,
        });
        await s.webhooks.delete(hook.id);
        expect((await s.rekey({ batchSize: 50 })).finished).toBe(true);
        expect(await countRemaining(s.db, keyIdOfBox(next))).toBe(0);
        subject!.key = next;
      } finally {
        await s.close();
      }
    }, 120_000);
  });
}

const keyIdOfBox = (key: Uint8Array) => new SecretBox(key).keyId;
