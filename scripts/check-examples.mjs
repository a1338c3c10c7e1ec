#!/usr/bin/env node
// `pnpm check:examples`: the documented embeddings work for someone who installs certwright from
// npm, not through the workspace's links (docs/development.md, "What is published").
//   1. The tarballs check:packages packed into .pack/ (packed here when absent: `pnpm build`
//      must have run) are installed with npm into a fresh folder outside the repository,
//      with express, fastify and hono from the registry (npm's cache first).
//   2. Each example's src/main.ts — the files README.md and docs/hosting/*.md show, see
//      check-doc-snippets.mjs — is type-checked there with `skipLibCheck: false` and compiled.
//   3. Each one is started on 127.0.0.1 with a throwaway key, data folder and certificate, and
//      must answer GET /api/v1/certificates with 200 and a page (the inventory is mounted).
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PACK_DIR, packAll, publishedPackages, tarballName } from './check-packages.mjs';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLES = ['node', 'express', 'fastify', 'hono'];
/** What the examples import, besides certwright; the ranges the examples' package.json files use. */
const THIRD_PARTY = {
  express: '^5.1.0',
  fastify: '^5.6.0',
  hono: '^4.9.0',
  '@hono/node-server': '^2.1.8',
  typescript: '~5.9.3',
  '@types/node': '^20.19.0',
  '@types/express': '^5.0.3',
  // PGlite's declarations use Emscripten's global types without depending on them; a consumer
  // type-checking with skipLibCheck: false adds them (docs/storage/README.md, "Type checking").
  '@types/emscripten': '^1.41.0',
};
/** certwright packages the examples need (with what they depend on); the others are not installed. */
const CERTWRIGHT = ['api', 'core', 'protocols', 'host-express', 'host-fastify', 'storage-pg', 'storage-sql'];
const START_DEADLINE_MS = 120_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function get(url, headers, ca) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, ca, timeout: 30_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.once('error', reject);
    req.end();
  });
}

/** Starts one compiled example and waits for its "listening on" line; rejects if it exits first. */
function start(dir, name, env) {
  const child = spawn(process.execPath, [join(dir, 'dist', name, 'main.js')], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not listen within ${START_DEADLINE_MS} ms`)),
      START_DEADLINE_MS,
    );
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening`));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { ready, stop, output: () => output };
}

async function main() {
  const started = Date.now();
  const packages = publishedPackages().filter(({ dir }) => CERTWRIGHT.includes(dir.split('/').at(-1)));
  if (!packages.every(({ manifest }) => existsSync(join(PACK_DIR, tarballName(manifest))))) await packAll();

  const dir = mkdtempSync(join(tmpdir(), 'certwright-examples-'));
  try {
    const tarballs = Object.fromEntries(
      packages.map(({ manifest }) => [manifest.name, `file:${join(PACK_DIR, tarballName(manifest))}`]),
    );
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify(
        {
          name: 'certwright-examples-check',
          private: true,
          type: 'module',
          dependencies: { ...tarballs, ...THIRD_PARTY },
          // A tarball's own dependency on another certwright package resolves to its tarball too.
          overrides: tarballs,
        },
        null,
        2,
      ),
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    console.log(`installed ${packages.length} tarballs into ${dir} in ${Date.now() - started} ms`);

    for (const name of EXAMPLES) {
      mkdirSync(join(dir, 'src', name), { recursive: true });
      cpSync(join(root, 'examples', name, 'src', 'main.ts'), join(dir, 'src', name, 'main.ts'));
    }
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          types: ['node', 'emscripten'],
          outDir: 'dist',
          rootDir: 'src',
        },
        include: ['src'],
      }),
    );
    try {
      await run(join(dir, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], {
        cwd: dir,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      throw new Error(
        `the examples do not type-check with skipLibCheck: false:\n${error.stdout}${error.stderr}`,
      );
    }
    console.log(`type-checked ${EXAMPLES.join(', ')} with skipLibCheck: false`);

    await run('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
      ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1'],
    ]);
    const ca = readFileSync(join(dir, 'cert.pem'));
    const apiKey = randomBytes(24).toString('base64url');
    // Two examples at a time (two cores): most of a start is PGlite creating its database.
    const failures = [];
    const check = async (name) => {
      const port = await freePort();
      const example = start(dir, name, {
        HOST: '127.0.0.1',
        PORT: String(port),
        API_KEY: apiKey,
        ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        DATA_DIR: join(dir, 'data', name, 'pglite'), // two levels that do not exist yet
        TLS_CERT_PATH: join(dir, 'cert.pem'),
        TLS_KEY_PATH: join(dir, 'key.pem'),
      });
      try {
        await example.ready;
        const url = `https://127.0.0.1:${port}/api/v1/certificates`;
        const answer = await get(url, { authorization: `Bearer ${apiKey}` }, ca);
        const page = answer.status === 200 ? JSON.parse(answer.body) : null;
        if (!Array.isArray(page?.data)) throw new Error(`GET /api/v1/certificates answered ${answer.status}`);
        console.log(`ok   ${name}: GET /api/v1/certificates 200 (${page.data.length} certificates)`);
      } catch (error) {
        failures.push(name);
        console.error(`FAIL ${name}: ${error.message}\n${example.output()}`);
      } finally {
        await example.stop();
      }
    };
    for (let i = 0; i < EXAMPLES.length; i += 2) await Promise.all(EXAMPLES.slice(i, i + 2).map(check));
    console.log(
      `check-examples: ${EXAMPLES.length - failures.length}/${EXAMPLES.length} in ${Date.now() - started} ms`,
    );
    if (failures.length) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
