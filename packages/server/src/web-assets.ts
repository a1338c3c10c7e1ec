import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_CSP, PAGE_SECURITY_HEADERS } from '@certwright/api';
import type { Logger } from '@certwright/core';

/** The web console's Content-Security-Policy (docs/web.md); /docs/api is served under it too. */
export const WEB_CSP = CONSOLE_CSP;

const SECURITY_HEADERS = PAGE_SECURITY_HEADERS;

/** First path segments the API, the protocols and the probes own: never the console's. */
const API_SEGMENTS = new Set([
  'api',
  'auth',
  '.well-known',
  'acme',
  'scep',
  'est',
  'ocsp',
  'crl',
  'health',
  'ready',
  'metrics',
  'docs',
]);

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer> | undefined;
  type: string;
  cache: string;
}

export interface WebAssets {
  readonly dir: string;
  /** Whether the console answers this request (GET or HEAD outside the API's paths). */
  owns(request: Request, apiSegments?: ReadonlySet<string>): boolean;
  serve(request: Request): Response;
}

/** The built console of @certwright/web, or undefined when it is not installed or not built. */
export function locateWebDist(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('@certwright/web/package.json');
    const dist = join(dirname(manifest), 'dist');
    return existsSync(join(dist, 'index.html')) ? dist : undefined;
  } catch {
    return undefined;
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

/**
 * Loads every file of the built console into memory (it is a few hundred kilobytes), gzipped
 * once for clients that accept it. Files under /assets/ carry a content hash in their names and
 * are cached for a year; index.html is revalidated on every load.
 */
export function loadWebAssets(dir: string): WebAssets {
  const assets = new Map<string, Asset>();
  for (const file of filesUnder(dir)) {
    // Dotfiles (the dev build's stamp) and oversized files are not part of the console.
    if (basename(file).startsWith('.') || statSync(file).size > 16 * 1024 * 1024) continue;
    const path = `/${relative(dir, file).split(sep).join('/')}`;
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const body = new Uint8Array(readFileSync(file));
    const compressible = type.startsWith('text/') || type.includes('json') || type.includes('svg');
    const gzip = compressible && body.length > 1024 ? new Uint8Array(gzipSync(body)) : undefined;
    const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    assets.set(path, { body, gzip, type, cache });
  }
  const index = assets.get('/index.html');
  if (!index) throw new Error(`${dir} holds no index.html`);

  const respond = (request: Request, asset: Asset, status = 200): Response => {
    const gzip =
      asset.gzip && /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '') ? asset.gzip : undefined;
    const body = gzip ?? asset.body;
    const headers = new Headers({
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      'cache-control': asset.cache,
      'content-length': String(body.length),
      vary: 'accept-encoding',
    });
    if (gzip) headers.set('content-encoding', 'gzip');
    return new Response(request.method === 'HEAD' ? null : body, { status, headers });
  };

  return {
    dir,
    owns(request, apiSegments) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const segment = new URL(request.url).pathname.split('/')[1] ?? '';
      return !API_SEGMENTS.has(segment) && !apiSegments?.has(segment);
    },
    serve(request) {
      const path = new URL(request.url).pathname;
      const asset = assets.get(path === '/' ? '/index.html' : path);
      if (asset) return respond(request, asset);
      // A client route (no file extension) gets the application, which routes it; a missing
      // file is a plain 404.
      const last = path.split('/').pop() ?? '';
      if (!path.startsWith('/assets/') && !last.includes('.')) return respond(request, index);
      return new Response('not found', {
        status: 404,
        headers: {
          ...SECURITY_HEADERS,
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
        },
      });
    },
  };
}

/** The console when it is built; a clear log line when it is not (the API is served either way). */
export function openWebAssets(
  logger: Logger,
  dir: string | undefined = locateWebDist(),
): WebAssets | undefined {
  if (!dir) {
    logger.info(
      {},
      'web console not built (packages/web/dist is missing; `pnpm build` or `pnpm start` builds it): / is not served, the API is',
    );
    return undefined;
  }
  try {
    const web = loadWebAssets(dir);
    logger.info({ dir }, 'web console served at /');
    return web;
  } catch (error) {
    logger.warn(
      { err: (error as Error).message },
      'web console could not be loaded: / is not served, the API is',
    );
    return undefined;
  }
}

/** First path segments of the handler's routes and protocol mounts. */
export function apiSegmentsOf(handler: {
  routes: readonly { path: string }[];
  protocols: readonly { prefix: string }[];
}): Set<string> {
  const segments = new Set<string>();
  for (const route of handler.routes) segments.add(route.path.split('/')[1] ?? '');
  for (const mount of handler.protocols) segments.add(mount.prefix.split('/')[1] ?? '');
  segments.delete('');
  return segments;
}
