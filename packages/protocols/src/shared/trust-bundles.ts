import { readFile } from 'node:fs/promises';
import { TrustBundle } from '@certwright/core/pki';

/**
 * The mutual-TLS trust bundle of each EST profile, read from the file its
 * `mtls_trust_bundle_path` names: loaded on first use, re-read on request (admin reload). A
 * reload that fails keeps the anchors loaded before. A profile whose path changes gets a new
 * bundle for the new file.
 */
export class EstTrustBundles {
  readonly #bundles = new Map<string, { path: string; bundle: TrustBundle; loading?: Promise<unknown> }>();

  constructor(private readonly read: (path: string) => Promise<string> = (path) => readFile(path, 'utf8')) {}

  /** The bundle for a profile and path, loaded once; a first load that fails throws and is retried next time. */
  async get(profileId: string, path: string, now: Date): Promise<TrustBundle> {
    let entry = this.#bundles.get(profileId);
    if (!entry || entry.path !== path) {
      entry = { path, bundle: new TrustBundle(() => this.read(path)) };
      this.#bundles.set(profileId, entry);
    }
    if (entry.bundle.loadedAt === null) {
      entry.loading ??= entry.bundle.reload(now).finally(() => {
        if (entry) entry.loading = undefined;
      });
      await entry.loading;
    }
    return entry.bundle;
  }

  /** Re-reads one profile's bundle; on failure the anchors in force stay and the error is thrown. */
  async reload(profileId: string, path: string, now: Date): Promise<TrustBundle> {
    const entry = this.#bundles.get(profileId);
    if (entry && entry.path === path) {
      await entry.bundle.reload(now);
      return entry.bundle;
    }
    // A new file replaces the old bundle only once it has loaded.
    const bundle = new TrustBundle(() => this.read(path));
    await bundle.reload(now);
    this.#bundles.set(profileId, { path, bundle });
    return bundle;
  }

  /** When the anchors in force for a profile were loaded; null when none are. */
  loadedAt(profileId: string): Date | null {
    return this.#bundles.get(profileId)?.bundle.loadedAt ?? null;
  }
}
