import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pkcs11ConfigFromEnv } from './config.js';
import { isResetError, tokenFailure } from './errors.js';

// What pkcs11js throws: an Error whose message starts with the CKR_ name and its number.
const ckr = (name: string) =>
  new Error(`${name}:160\n    at PKCS11.C_Login (/somewhere/private/path.js:1:1)`);

describe('token errors as domain failures', () => {
  it.each([
    ['CKR_PIN_INCORRECT', 'config_invalid'],
    ['CKR_PIN_LOCKED', 'config_invalid'],
    ['CKR_MECHANISM_INVALID', 'key_not_allowed'],
    ['CKR_KEY_SIZE_RANGE', 'key_not_allowed'],
    ['CKR_OBJECT_HANDLE_INVALID', 'not_found'],
    ['CKR_TOKEN_NOT_PRESENT', 'unavailable'],
    ['CKR_DEVICE_REMOVED', 'unavailable'],
    ['CKR_GENERAL_ERROR', 'unavailable'],
  ])('%s → %s, naming the token and the CKR_ code but no path', (name, reason) => {
    const failure = tokenFailure(ckr(name), 'sign', 'ca-token');
    expect(failure.reason).toBe(reason);
    expect(failure.message).toContain(name);
    expect(failure.message).toContain('ca-token');
    expect(failure.message).not.toContain('/somewhere');
  });

  it('tells the errors after which logging in again may help', () => {
    expect(isResetError(ckr('CKR_SESSION_HANDLE_INVALID'))).toBe(true);
    expect(isResetError(ckr('CKR_USER_NOT_LOGGED_IN'))).toBe(true);
    expect(isResetError(ckr('CKR_PIN_INCORRECT'))).toBe(false);
    expect(isResetError(new Error('something else'))).toBe(false);
  });
});

describe('pkcs11ConfigFromEnv', () => {
  it('is null without a module and reads the PIN from its file without the trailing newline', () => {
    expect(pkcs11ConfigFromEnv({})).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'cw-pin-'));
    writeFileSync(join(dir, 'pin'), '0246 8\n');
    expect(
      pkcs11ConfigFromEnv({
        SVC_PKCS11_MODULE: '/m.so',
        SVC_PKCS11_TOKEN_LABEL: 'ca',
        SVC_PKCS11_PIN_FILE: join(dir, 'pin'),
      }),
    ).toEqual({ module: '/m.so', tokenLabel: 'ca', pin: '0246 8' });
  });

  it('names the missing variable and never the PIN', () => {
    expect(() => pkcs11ConfigFromEnv({ SVC_PKCS11_MODULE: '/m.so', SVC_PKCS11_PIN: '777111' })).toThrow(
      /SVC_PKCS11_TOKEN_LABEL is required/,
    );
    expect(() => pkcs11ConfigFromEnv({ SVC_PKCS11_MODULE: '/m.so', SVC_PKCS11_TOKEN_LABEL: 'ca' })).toThrow(
      /SVC_PKCS11_PIN_FILE or SVC_PKCS11_PIN is required/,
    );
    expect(() =>
      pkcs11ConfigFromEnv({
        SVC_PKCS11_MODULE: '/m.so',
        SVC_PKCS11_TOKEN_LABEL: 'ca',
        SVC_PKCS11_PIN_FILE: '/nonexistent',
      }),
    ).toThrow(/SVC_PKCS11_PIN_FILE cannot be read/);
  });
});
