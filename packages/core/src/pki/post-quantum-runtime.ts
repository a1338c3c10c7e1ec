import { generateKeyPairSync } from 'node:crypto';
import { fail } from '../errors.js';

/**
 * Whether this process can create and verify ML-DSA and SLH-DSA keys: node:crypto gained them
 * with Node.js 24 on OpenSSL 3.5. Decided once, at first use, from the versions and one real
 * key generation (a Node built against an older system OpenSSL reports 24 but cannot).
 * docs/pki/post-quantum.md.
 */

export interface PostQuantumRuntime {
  supported: boolean;
  node: string;
  openssl: string;
}

export const POST_QUANTUM_MIN_NODE_MAJOR = 24;

const atLeast = (version: string, major: number, minor: number): boolean => {
  const [a = 0, b = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return a > major || (a === major && b >= minor);
};

function probe(): PostQuantumRuntime {
  const node = process.versions.node;
  const openssl = process.versions.openssl ?? 'none';
  let supported = atLeast(node, POST_QUANTUM_MIN_NODE_MAJOR, 0) && atLeast(openssl, 3, 5);
  if (supported) {
    try {
      // The cheapest of the sets; a type node:crypto does not know throws here.
      generateKeyPairSync('ml-dsa-44' as 'ed25519');
    } catch {
      supported = false;
    }
  }
  return Object.freeze({ supported, node, openssl });
}

let detected: PostQuantumRuntime | undefined;

export function postQuantumRuntime(): PostQuantumRuntime {
  detected ??= probe();
  return detected;
}

/**
 * Refuses `what` (an issuer, a profile, a key of a post-quantum parameter set) on a runtime
 * without post-quantum signatures, naming the version needed.
 */
export function assertPostQuantumRuntime(
  what: string,
  field = 'key_algorithm',
  runtime: PostQuantumRuntime = postQuantumRuntime(),
): void {
  if (runtime.supported) return;
  const message = `${what} needs Node.js ${POST_QUANTUM_MIN_NODE_MAJOR} or later with OpenSSL 3.5 or later (this is Node.js ${runtime.node} with OpenSSL ${runtime.openssl})`;
  throw fail('runtime_unsupported', message, { fields: [{ field, message }] });
}
