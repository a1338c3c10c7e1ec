/**
 * What every Chromium-driven check of the console needs, the browser tests and `pnpm bench web`
 * alike: the built console (built once when `dist/` is missing) and Debian's Chromium, headless,
 * trusting exactly the test server's key (its SPKI pin) and nothing else. No vitest here, so the
 * benchmark can import it.
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
export const webDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const dist = join(webDir, 'dist');

/**
 * Runs `vite build` into dist/ unless a build is there already (tests), or always (`fresh`: a
 * benchmark must not measure a build older than the sources).
 */
export function ensureConsoleBuilt(fresh = false): void {
  if (!fresh && existsSync(join(dist, 'index.html'))) return;
  execFileSync(
    process.execPath,
    [join(webDir, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
    {
      cwd: webDir,
      stdio: 'inherit',
    },
  );
}

/** Headless Chromium that trusts the server certificate `serverCertPem` by its key's pin only. */
export async function launchChromium(serverCertPem: string | Buffer): Promise<Browser> {
  const spki = new X509Certificate(serverCertPem).publicKey.export({ type: 'spki', format: 'der' });
  const pin = createHash('sha256').update(spki).digest('base64');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      `--ignore-certificate-errors-spki-list=${pin}`,
    ],
  });
}
