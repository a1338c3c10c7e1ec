#!/usr/bin/env node
import { join, relative, resolve } from 'node:path';
import { ensureAdminKey, ensureBootstrapTls } from './bootstrap.js';

/**
 * `pnpm start`: runs certwright-server with embedded defaults. When no TLS files are
 * configured it creates a development CA, a localhost certificate and an admin API key under
 * the data directory, then starts the server with those paths set explicitly — the server
 * itself still requires SVC_TLS_CERT_PATH and SVC_TLS_KEY_PATH.
 */
async function quickstart(): Promise<void> {
  const env = process.env;
  const dataDir = resolve(env.SVC_DATA_DIR || './data');
  const shown = (path: string) => `./${relative(process.cwd(), path)}`;
  const lines: string[] = [];

  if (!env.SVC_TLS_CERT_PATH && !env.SVC_TLS_KEY_PATH) {
    const files = await ensureBootstrapTls(join(dataDir, 'bootstrap'), {
      logger: { warn: (_fields, message) => lines.push(`WARNING: ${message}`) },
    });
    env.SVC_TLS_CERT_PATH = files.serverCertPath;
    env.SVC_TLS_KEY_PATH = files.serverKeyPath;
    // The development bootstrap stays on this host unless an address is chosen (either name).
    if (!env.SVC_BIND_ADDRESS && !env.SVC_LISTEN_ADDR) env.SVC_BIND_ADDRESS = '127.0.0.1';
    lines.push(
      'WARNING: development bootstrap. Bring your own certificate and key in production.',
      `  CA certificate (trust this):  ${shown(files.caCertPath)}`,
      `  server certificate and key:   ${shown(files.serverCertPath)}, ${shown(files.serverKeyPath)}`,
    );
  }
  let keyPath: string | undefined;
  if ((env.SVC_AUTH_TYPE || 'api-key') === 'api-key' && !env.SVC_AUTH_SECRET) {
    keyPath = join(dataDir, 'admin-api-key');
    env.SVC_AUTH_SECRET = await ensureAdminKey(keyPath);
    lines.push(`  admin API key:                ${shown(keyPath)}`);
  }
  env.SVC_DATA_DIR = dataDir;
  const port = env.SVC_PORT || '8443';
  const ca = lines.length > 0 ? ` --cacert ${shown(join(dataDir, 'bootstrap', 'ca.pem'))}` : '';
  const bearer = keyPath ? ` -H "Authorization: Bearer $(cat ${shown(keyPath)})"` : '';
  lines.push('', 'Try it:', `  curl${ca}${bearer} https://localhost:${port}/api/v1/version`, '');
  process.stderr.write(`${lines.join('\n')}\n`);
  await import('./main.js');
}

quickstart().catch((error: unknown) => {
  process.stderr.write(`certwright quick start failed: ${(error as Error).message}\n`);
  process.exit(1);
});
