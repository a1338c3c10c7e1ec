import { randomBytes } from 'node:crypto';
import { SecretBox } from '@certwright/core';
import type { SqlStorage } from '@certwright/storage-sql';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from '../src/index.js';
import { createTempDatabase, postgresSkipReason } from './helpers.js';

/**
 * Certificate search on the engines with a trigram index, once the statistics say that a word of
 * the pattern is in nearly every row: the index is then asked for the rest of the pattern only
 * (docs/storage/README.md, "Inventory at scale"), and the answer must still be exactly the
 * certificates whose name, common name or SANs contain the whole pattern.
 */

const secretBox = new SecretBox(randomBytes(32));
const pgSkip = await postgresSkipReason();

const engines: [string, () => Promise<{ storage: SqlStorage; drop: () => Promise<void> }>, string?][] = [
  [
    'PGlite',
    async () => ({
      storage: await createPgliteStorage({ memory: true }, { secretBox }),
      drop: async () => {},
    }),
  ],
  [
    'PostgreSQL',
    async () => {
      const temp = await createTempDatabase();
      return { storage: createPostgresStorage(temp.url, { secretBox }), drop: temp.drop };
    },
    pgSkip,
  ],
];

for (const [engine, open, skip] of engines) {
  describe.skipIf(skip !== undefined)(`certificate search with common words (${engine})`, () => {
    if (skip) console.log(`skipped: ${skip}`);
    let storage: SqlStorage;
    let drop: () => Promise<void>;
    const names = new Map<string, { id: string; owner: string }>();
    let owners: string[] = [];

    beforeAll(async () => {
      ({ storage, drop } = await open());
      await storage.migrate();
      const team = (await storage.teams.create({ name: 'search team' })).id;
      const issuer = (await storage.issuers.create({ name: 'search issuer', type: 'Local' })).id;
      owners = [
        (await storage.owners.create({ name: 'a' })).id,
        (await storage.owners.create({ name: 'b' })).id,
      ];
      // "host" is in every name; the other rows around the interesting ones make it common.
      const special = ['host-1', 'host-12', 'xhost-1', 'ghost-1x', 'host-21', 'post-1', 'host.1', 'HOST-1B'];
      const all = [...special, ...Array.from({ length: 60 }, (_, i) => `host-${i + 300}`)];
      for (const [i, name] of all.entries()) {
        const owner = owners[i % 2] as string;
        const cert = await storage.certificates.create({
          name: `${name}.fleet.test`,
          common_name: `${name}.fleet.test`,
          owner_id: owner,
          team_id: team,
          issuer_id: issuer,
          renewal_policy_id: 'rp-default',
        });
        names.set(name, { id: cert.id, owner });
      }
      await sql`analyze certificates`.execute(storage.db);
    }, 120_000);
    afterAll(async () => {
      await storage?.close();
      await drop?.();
    });

    const found = async (search: string, owner_id?: string) => {
      const page = await storage.certificates.list({ search, owner_id, perPage: 100, exactTotalLimit: 1000 });
      return page.items.map((c) => c.name.replace('.fleet.test', '')).sort();
    };

    it('finds exactly the names containing the whole pattern, not those containing only its rare part', async () => {
      // 'post-1' and 'host-21' share '-1' or 'host' with the pattern but do not contain it.
      expect(await found('host-1')).toEqual(['ghost-1x', 'host-1', 'host-12', 'xhost-1', 'HOST-1B'].sort());
      expect(await found('HOST-1')).toEqual(await found('host-1'));
      expect(await found('host-31')).toEqual(
        ['host-310', 'host-311', 'host-312', 'host-313', 'host-314']
          .concat(['host-315', 'host-316', 'host-317', 'host-318', 'host-319'])
          .sort(),
      );
      expect(await found('st.1')).toEqual(['host.1']);
    });

    it('combines the search with an owner, and counts what it finds', async () => {
      const owner = owners[0] as string;
      const expected = [...names].filter(([n, v]) => n.toLowerCase().includes('host-1') && v.owner === owner);
      expect(await found('host-1', owner)).toEqual(expected.map(([n]) => n).sort());
      const page = await storage.certificates.list({
        search: 'host-1',
        owner_id: owner,
        exactTotalLimit: 1000,
      });
      expect(page).toMatchObject({ total: expected.length, totalEstimated: false });
    });

    it('answers a pattern without a trigram (the index cannot narrow it) as any other', async () => {
      // "1b" has no known word boundary: pg_trgm takes no trigram from it, so the statement
      // keeps the plan that does not go through the search index (docs/storage/README.md).
      const owner = names.get('HOST-1B')?.owner as string;
      expect(await found('1b')).toEqual(['HOST-1B']);
      expect(await found('1b', owner)).toEqual(['HOST-1B']);
      const other = owners.find((o) => o !== owner) as string;
      expect(await found('1b', other)).toEqual([]);
    });
  });
}
