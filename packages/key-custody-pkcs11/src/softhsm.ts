import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where Debian's softhsm2 package puts the module. */
export const SOFTHSM_MODULE_PATHS = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
];

export const softHsmModule = (): string | undefined => SOFTHSM_MODULE_PATHS.find((p) => existsSync(p));

export interface SoftHsmToken {
  module: string;
  tokenLabel: string;
  pin: string;
  soPin: string;
  /** The SOFTHSM2_CONF this token lives under (set in process.env by {@link createSoftHsmToken}). */
  conf: string;
  dispose(): void;
}

/**
 * A fresh SoftHSM2 token in a temporary directory, for tests and benchmarks: writes a
 * softhsm2.conf, points SOFTHSM2_CONF at it (SoftHSM reads it when the module initialises, so
 * call this before opening a custody) and initialises a token with `softhsm2-util`.
 */
export function createSoftHsmToken(label = 'certwright-test'): SoftHsmToken {
  const module = softHsmModule();
  if (!module) throw new Error('SoftHSM2 is not installed (Debian package softhsm2)');
  const dir = mkdtempSync(join(tmpdir(), 'certwright-softhsm-'));
  const tokens = join(dir, 'tokens');
  mkdirSync(tokens);
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  const pin = '246810';
  const soPin = '13579135';
  execFileSync(
    'softhsm2-util',
    ['--init-token', '--free', '--label', label, '--so-pin', soPin, '--pin', pin],
    {
      env: { ...process.env, SOFTHSM2_CONF: conf },
      stdio: 'ignore',
    },
  );
  return {
    module,
    tokenLabel: label,
    pin,
    soPin,
    conf,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
