import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { fail } from '../errors.js';

/**
 * Password hashes for credentials certwright checks itself (EST HTTP Basic): scrypt
 * (RFC 7914), memory-hard, with a random 16-byte salt. Stored form, parameters included so they
 * can be raised later without invalidating stored hashes:
 *
 *     scrypt$<log2 N>$<r>$<p>$<salt base64>$<hash base64>
 *
 * Defaults N = 2^15, r = 8, p = 3: OWASP's scrypt recommendation for 32 MiB of memory; about
 * 100 ms of CPU per check on a 2020s server core, which callers avoid paying on every request
 * with a short-lived cache of successful checks (see the EST service).
 */

export interface ScryptParameters {
  log2N: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_PARAMETERS: Readonly<ScryptParameters> = Object.freeze({ log2N: 15, r: 8, p: 3 });

const KEY_LENGTH = 32;
const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/]{22}(?:==)?)\$([A-Za-z0-9+/]{43}=?)$/;

/** The hash to store for `password`. */
export async function hashPassword(
  password: string,
  parameters: ScryptParameters = DEFAULT_SCRYPT_PARAMETERS,
): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, parameters);
  const { log2N, r, p } = parameters;
  return `scrypt$${log2N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * Whether `password` matches `stored`, compared in constant time. A stored value that is not a
 * hash of this format never matches (and costs a check with the default parameters, so a
 * caller that checks a dummy hash for unknown users takes as long as for known ones).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  const { salt, expected, parameters } = parsed ?? {
    salt: Buffer.alloc(16),
    expected: Buffer.alloc(KEY_LENGTH),
    parameters: DEFAULT_SCRYPT_PARAMETERS,
  };
  const actual = await derive(password, salt, parameters);
  return timingSafeEqual(actual, expected) && parsed !== null;
}

/** Whether `value` has the stored form (used to refuse foreign values before storing them). */
export const isPasswordHash = (value: string): boolean => parseHash(value) !== null;

function parseHash(stored: string): { salt: Buffer; expected: Buffer; parameters: ScryptParameters } | null {
  const m = FORMAT.exec(stored);
  if (!m) return null;
  const parameters = { log2N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (!plausible(parameters)) return null;
  return { parameters, salt: Buffer.from(m[4]!, 'base64'), expected: Buffer.from(m[5]!, 'base64') };
}

/** Bounds that keep a stored hash from making a check take minutes or gigabytes. */
function plausible({ log2N, r, p }: ScryptParameters): boolean {
  return (
    log2N >= 10 && log2N <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16 && 128 * r * 2 ** log2N <= 1 << 30
  );
}

function derive(password: string, salt: Buffer, { log2N, r, p }: ScryptParameters): Promise<Buffer> {
  if (!plausible({ log2N, r, p })) throw fail('invalid_input', 'scrypt parameters out of range');
  const N = 2 ** log2N;
  return new Promise((resolve, reject) => {
    // maxmem: scrypt needs 128·N·r bytes; Node's default cap (32 MiB) is just below that.
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r }, (error, key) => {
      if (error) reject(fail('internal', 'password hashing failed', { cause: error }));
      else resolve(key);
    });
  });
}
