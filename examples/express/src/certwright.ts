/**
 * certwright's services on embedded PGlite. A real deployment passes a data directory and a
 * 32-byte key it keeps safe (it seals CA keys and connector secrets at rest); PostgreSQL or
 * MySQL work the same way through their storage packages.
 */
import { createServices, SecretBox, type Services, silentLogger, systemClock } from '@certwright/core';
import { createPgliteStorage, type PgliteLocation } from '@certwright/storage-pg';

export async function openCertwright(
  location: PgliteLocation,
  encryptionKey: Uint8Array,
): Promise<{ services: Services; close(): Promise<void> }> {
  const storage = await createPgliteStorage(location, { secretBox: new SecretBox(encryptionKey) });
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  return { services, close: () => storage.close() };
}
