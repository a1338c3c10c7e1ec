import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../errors.js';
import { describeKeyCustodyContract } from '../testing/key-custody-contract.js';
import { SoftwareKeyCustody } from './software.js';

describeKeyCustodyContract('software', async () => ({
  custody: new SoftwareKeyCustody(),
  ed25519: true,
  reportsExtractable: true,
}));

describe('SoftwareKeyCustody sealing round trip', () => {
  it('exports an extractable key as PKCS#8 and a second custody signs with the same key after import', async () => {
    const a = new SoftwareKeyCustody();
    await a.createKey({ algorithm: 'ECDSA-P384', label: 'ca', extractable: true });
    const pem = a.exportPkcs8('ca');
    const b = new SoftwareKeyCustody();
    b.importPkcs8('ca', pem);
    expect((await b.publicKey('ca')).equals(await a.publicKey('ca'))).toBe(true);
    expect(b.importPkcs8('ca', pem)).toMatchObject({ algorithm: 'ECDSA-P384' });
  });

  it('never exports a key created non-extractable', async () => {
    const a = new SoftwareKeyCustody();
    await a.createKey({ algorithm: 'ECDSA-P256', label: 'ca', extractable: false });
    try {
      a.exportPkcs8('ca');
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.reason).toBe('not_permitted');
    }
  });
});
