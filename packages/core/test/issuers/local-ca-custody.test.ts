import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import { createLocalCaConnector, generateLocalCaWithRootKey } from '../../src/issuers/local-ca.js';
import { SoftwareKeyCustody } from '../../src/key-custody/software.js';

const issuer = (config: Record<string, unknown>) => ({
  id: 'iss-custody-test',
  name: 'custody test',
  type: 'Local' as const,
  enabled: true,
  config,
  created_at: new Date(),
  updated_at: new Date(),
});

function context(config: Record<string, unknown>, keyCustody?: SoftwareKeyCustody) {
  let stored = config;
  return {
    ctx: {
      issuer: issuer(config) as never,
      now: () => new Date(),
      persistConfig: async (mutate: (c: Record<string, unknown>) => Record<string, unknown> | null) => {
        stored = mutate(stored) ?? stored;
      },
      hasIssued: async () => false,
      ...(keyCustody ? { keyCustody } : {}),
    },
    stored: () => stored,
  };
}

describe('Local CA key custody', () => {
  it('keeps software keys sealed in the config (the default) and signs through the port', async () => {
    const { ctx, stored } = context({});
    const connector = await createLocalCaConnector(ctx);
    const ca = stored().ca as Record<string, string>;
    expect(ca.issuing_key_pem).toMatch(/BEGIN PRIVATE KEY/);
    expect(ca.issuing_key_label).toBeUndefined();
    const [issuing] = await connector.caChain();
    expect(new X509Certificate(issuing!).verify(new X509Certificate(ca.upper_chain_pem!).publicKey)).toBe(
      true,
    );
  });

  it('refuses a pkcs11 issuer when the server has no token custody, naming the variables to set', async () => {
    const { ctx } = context({ key_custody: 'pkcs11' });
    try {
      await createLocalCaConnector(ctx);
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.reason).toBe('issuer_not_ready');
      expect((error as Error).message).toContain('SVC_PKCS11_MODULE');
    }
  });

  it('refuses a custody of another kind for a pkcs11 issuer rather than signing with it', async () => {
    const { ctx } = context({ key_custody: 'pkcs11' }, new SoftwareKeyCustody());
    await expect(createLocalCaConnector(ctx)).rejects.toMatchObject({ reason: 'issuer_not_ready' });
  });

  it('refuses to return a root key for a CA whose keys live on a token (they never leave it)', async () => {
    await expect(
      generateLocalCaWithRootKey({ name: 'token' }, { key_custody: 'pkcs11' }, new Date()),
    ).rejects.toMatchObject({ reason: 'invalid_input' });
  });
});
