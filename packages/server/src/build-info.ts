import { readFile } from 'node:fs/promises';
import type { VersionInfo } from '@certwright/api';

/** Written by scripts/build-info.mjs at build time; absent when running from sources. */
export async function readBuildInfo(): Promise<Partial<VersionInfo>> {
  try {
    return JSON.parse(await readFile(new URL('./build-info.json', import.meta.url), 'utf8'));
  } catch {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    return { version: pkg.version };
  }
}
