import type { CertificateProfile } from '../domain/profile.js';
import { fail } from '../errors.js';
import type { Storage } from '../ports/storage.js';

/**
 * The profile an enrollment protocol route serves: the default profile for the root routes
 * (`pathId` null), otherwise the one whose `<protocol>.path_id` is `pathId` or, for a profile
 * without a path id, the one with that id. A profile with the protocol disabled is as absent as
 * an unknown one: `not_found`.
 */
export async function protocolProfile(
  storage: Storage,
  protocol: 'est' | 'scep',
  pathId: string | null,
  defaultProfileId: string,
): Promise<CertificateProfile> {
  let profile: CertificateProfile | null;
  if (pathId === null) profile = await storage.profiles.get(defaultProfileId);
  else {
    profile = await storage.profiles.findByPathId(protocol, pathId);
    if (!profile) {
      const byId = await storage.profiles.get(pathId);
      profile = byId && byId[protocol].path_id === null ? byId : null;
    }
  }
  if (!profile?.[protocol].enabled) {
    const name = protocol.toUpperCase();
    throw fail(
      'not_found',
      pathId === null
        ? `${name} is not enabled on the root profile`
        : `no ${name} profile '${pathId.slice(0, 64)}'`,
    );
  }
  return profile;
}
