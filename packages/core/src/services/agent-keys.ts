/** Agent keys carry a recognisable prefix so a leaked one can be found by secret scanners. */
export const AGENT_KEY_PREFIX = 'cwa_';

/** `cwa_` + 32 random bytes in base64url: 256 bits of entropy. */
export function newAgentKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return AGENT_KEY_PREFIX + Buffer.from(bytes).toString('base64url');
}

/** Lower-case hex SHA-256 of the whole key string, as stored in `api_key_hash`. */
export async function hashAgentKey(key: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return Buffer.from(digest).toString('hex');
}
