import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { isCertwrightError } from '@certwright/core';
import { describeKeyCustodyContract, verifyWithSpki } from '@certwright/core/testing';
import type * as Pkcs11Js from 'pkcs11js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pkcs11KeyCustody } from './custody.js';
import { createSoftHsmToken, type SoftHsmToken, softHsmModule } from './softhsm.js';

const skip = softHsmModule() ? undefined : 'SoftHSM2 is not installed (apt-get install softhsm2)';
if (skip && process.env.SVC_TEST_REQUIRE_SERVICES) throw new Error(skip);

let token: SoftHsmToken | undefined;
let shared: Pkcs11KeyCustody | undefined;
const open = () => {
  token ??= createSoftHsmToken();
  shared ??= Pkcs11KeyCustody.open({ module: token.module, tokenLabel: token.tokenLabel, pin: token.pin });
  return shared;
};
afterAll(async () => {
  await shared?.close();
  token?.dispose();
});

// First: PKCS#11 login state belongs to the process, so a wrong PIN is only refused before any
// custody of this process has logged in.
describe.skipIf(skip)('PKCS#11 custody on SoftHSM2: refused at open', () => {
  it('refuses a wrong PIN, a missing module and an unknown token at open, without the PIN in the message', () => {
    token ??= createSoftHsmToken();
    const t = token;
    const wrong = reasonOf(() =>
      Pkcs11KeyCustody.open({ module: t.module, tokenLabel: t.tokenLabel, pin: '999999' }),
    );
    expect(wrong).toMatch(/^config_invalid: .*CKR_PIN_INCORRECT/);
    expect(wrong).not.toContain('999999');
    expect(
      reasonOf(() =>
        Pkcs11KeyCustody.open({ module: '/nonexistent/libpkcs11.so', tokenLabel: 'x', pin: t.pin }),
      ),
    ).toMatch(/^config_invalid: .*cannot be loaded/);
    expect(
      reasonOf(() => Pkcs11KeyCustody.open({ module: t.module, tokenLabel: 'no such token', pin: t.pin })),
    ).toMatch(/^config_invalid: no PKCS#11 token labelled 'no such token'/);
  });
});

describeKeyCustodyContract(
  'PKCS#11 on SoftHSM2',
  async () => ({ custody: open(), ed25519: true, reportsExtractable: true }),
  { skip },
);

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (isCertwrightError(error)) return `${error.reason}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a failure');
};

describe.skipIf(skip)('PKCS#11 custody on SoftHSM2: failures and recovery', () => {
  beforeAll(() => {
    open();
  });

  it('logs in again after every session of the token was closed under it (a token reset)', async () => {
    const custody = open();
    await custody.createKey({ algorithm: 'ECDSA-P256', label: 'reset test', extractable: false });
    const spki = await custody.publicKey('reset test');
    // A second handle on the same module in this process, as another component resetting the token.
    const other = new (createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Js).PKCS11();
    other.load(token!.module);
    try {
      other.C_Initialize();
    } catch {
      // Initialised already by the custody: the same library state.
    }
    for (const slot of other.C_GetSlotList(true)) other.C_CloseAllSessions(slot);
    const data = Buffer.from('after the reset');
    const signature = await custody.sign('reset test', 'ECDSA-SHA256', data);
    expect(verifyWithSpki(spki, 'ECDSA-SHA256', data, signature)).toBe(true);
    expect(await custody.ready()).toBe(true);
    await custody.destroy('reset test');
  });

  it('creates keys that pkcs11-tool reports as sensitive and not extractable', async () => {
    const custody = open();
    await custody.createKey({ algorithm: 'ECDSA-P384', label: 'ca key check', extractable: false });
    const out = execFileSync(
      'pkcs11-tool',
      [
        '--module',
        token!.module,
        '--token-label',
        token!.tokenLabel,
        '--login',
        '--pin',
        token!.pin,
        '--list-objects',
        '--type',
        'privkey',
      ],
      { env: { ...process.env, SOFTHSM2_CONF: token!.conf }, encoding: 'utf8' },
    );
    const block = out.split(/\n(?=Private Key Object)/).find((b) => b.includes('label:      ca key check'));
    expect(block).toBeDefined();
    expect(block).toMatch(/Access:\s+.*\bsensitive\b/);
    expect(block).toMatch(/never extractable/);
    expect(block).not.toMatch(/Access:[^\n]*(?<!never )\bextractable\b(?!.*never)/);
    await custody.destroy('ca key check');
  });

  it('is not ready once closed, and reports unavailable', async () => {
    const t = token!;
    const second = Pkcs11KeyCustody.open({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin });
    expect(await second.ready()).toBe(true);
    await second.close();
    expect(await second.ready()).toBe(false);
    await expect(second.list()).rejects.toMatchObject({ reason: 'unavailable' });
  });
});
