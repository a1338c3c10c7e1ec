import { createCipheriv, createHash, createHmac, type KeyObject, pbkdf2Sync, randomBytes } from 'node:crypto';
import { CertwrightError } from '../errors.js';
import { readCertificate } from './certificate-info.js';
import {
  algorithmIdentifier,
  bmpString,
  explicit,
  implicitPrimitive,
  integer,
  NULL,
  octetString,
  oid,
  sequence,
  setOf,
} from './der.js';
import { exportPkcs8Der, exportSpkiDer } from './keys.js';
import { OID } from './oids.js';
import { sha256Iterated } from './sha256-iterated.js';

/**
 * PKCS#12 (RFC 7292) export with the algorithms OpenSSL 3 uses by default: key and
 * certificates encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), integrity MAC
 * HMAC-SHA256 keyed by the PKCS#12 KDF. OpenSSL 3 and Java ≥ 12 (keytool) read these;
 * legacy RC2/3DES files are deliberately not produced.
 *
 * Work factor: {@link PKCS12_DEFAULT_ITERATIONS} (600,000, OWASP's figure for
 * PBKDF2-HMAC-SHA256) for both PBKDF2 and the MAC key derivation. The MAC must cost as much as
 * the encryption: a password guess checked against a cheap MAC needs no decryption at all. The
 * MAC stays the RFC 7292 one (PKCS#12 KDF with SHA-256, not PBKDF2): PBMAC1 (RFC 9579), which
 * would put PBKDF2 there too, is read only by OpenSSL ≥ 3.4 and recent JDKs, and the OpenSSL 3.0
 * and Java 17 of current distributions refuse such a file.
 */

export interface Pkcs12Options {
  privateKey: KeyObject;
  /** The end-entity certificate (DER), matching `privateKey`. */
  certificate: Uint8Array;
  /** Intermediates and optionally the root, DER, nearest first. */
  chain?: readonly Uint8Array[];
  /** Never logged, never stored. */
  password: string;
  /** The alias keytool shows; default: the certificate's CN or "certwright". */
  friendlyName?: string;
  /** PBKDF2 and MAC iteration count; default and minimum {@link PKCS12_DEFAULT_ITERATIONS}. */
  iterations?: number;
}

/** PBKDF2 and MAC iterations of every export (OpenSSL's own default, 2048, is far too cheap). */
export const PKCS12_DEFAULT_ITERATIONS = 600_000;
/** Java's PKCS12KeyStore refuses iteration counts above 5,000,000 when it reads a file. */
const PKCS12_MAX_ITERATIONS = 5_000_000;

const SHA256_ALG = algorithmIdentifier(OID.idSha256, NULL);

/**
 * Shortest export password accepted (characters, i.e. code points). The file leaves the
 * service; a short password falls to an offline guessing attack whatever the iteration count.
 */
export const PKCS12_MIN_PASSWORD_LENGTH = 8;

function pbes2Encrypt(
  plaintext: Uint8Array,
  password: string,
  iterations: number,
): { algorithm: Buffer; ciphertext: Buffer } {
  const salt = randomBytes(16);
  const iv = randomBytes(16);
  // RFC 8018 §6.2 takes the password as an octet string; OpenSSL and Java both use UTF-8.
  const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const algorithm = sequence(
    oid(OID.pbes2),
    sequence(
      sequence(
        oid(OID.pbkdf2),
        sequence(octetString(salt), integer(iterations), algorithmIdentifier(OID.hmacWithSHA256, NULL)),
      ),
      sequence(oid(OID.aes256Cbc), octetString(iv)),
    ),
  );
  return { algorithm, ciphertext };
}

/**
 * The PKCS#12 key derivation (RFC 7292 Appendix B.2) with SHA-256, used only for the MAC
 * key (id = 3). The password is the BMPString form with a two-byte terminator (B.1).
 */
export function pkcs12Kdf(
  password: string,
  salt: Uint8Array,
  id: number,
  iterations: number,
  size: number,
): Buffer {
  const u = 32;
  const v = 64;
  const pwd = Buffer.concat([Buffer.from(password, 'utf16le').swap16(), Buffer.alloc(2)]);
  const fill = (src: Uint8Array): Buffer => {
    if (src.length === 0) return Buffer.alloc(0);
    const out = Buffer.alloc(v * Math.ceil(src.length / v));
    for (let i = 0; i < out.length; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const D = Buffer.alloc(v, id);
  const I = Buffer.concat([fill(salt), fill(pwd)]);
  const blocks: Buffer[] = [];
  for (let produced = 0; produced < size; produced += u) {
    const A = sha256Iterated(createHash('sha256').update(D).update(I).digest(), iterations - 1);
    blocks.push(A);
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block, with B = A repeated to v bytes.
    const B = fill(A);
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k]! + B[k]! + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, size);
}

const attribute = (type: string, value: Buffer): Buffer => sequence(oid(type), setOf(value));

const certBag = (der: Uint8Array, attrs: Buffer[]): Buffer =>
  sequence(
    oid(OID.certBag),
    explicit(0, sequence(oid(OID.x509Certificate), explicit(0, octetString(der)))),
    ...(attrs.length ? [setOf(...attrs)] : []),
  );

/** ContentInfo of type encryptedData (RFC 5652 §8) holding `content` under PBES2. */
function encryptedContentInfo(content: Buffer, password: string, iterations: number): Buffer {
  const { algorithm, ciphertext } = pbes2Encrypt(content, password, iterations);
  const encryptedData = sequence(
    integer(0),
    sequence(oid(OID.data), algorithm, implicitPrimitive(0, ciphertext)),
  );
  return sequence(oid(OID.encryptedData), explicit(0, encryptedData));
}

/** Builds a password-protected PKCS#12 file (DER) with the key, its certificate and the chain. */
export function exportPkcs12(options: Pkcs12Options): Buffer {
  const { privateKey, certificate, password } = options;
  const iterations = options.iterations ?? PKCS12_DEFAULT_ITERATIONS;
  if (typeof password !== 'string' || [...password].length < PKCS12_MIN_PASSWORD_LENGTH) {
    const message = `must be at least ${PKCS12_MIN_PASSWORD_LENGTH} characters`;
    throw new CertwrightError('validation_failed', `a PKCS#12 export password ${message}`, {
      fields: [{ field: 'password', message }],
    });
  }
  if (
    !Number.isInteger(iterations) ||
    iterations < PKCS12_DEFAULT_ITERATIONS ||
    iterations > PKCS12_MAX_ITERATIONS
  ) {
    throw new CertwrightError(
      'validation_failed',
      `PKCS#12 iterations must be between ${PKCS12_DEFAULT_ITERATIONS} and ${PKCS12_MAX_ITERATIONS}`,
    );
  }
  const info = readCertificate(certificate);
  if (!exportSpkiDer(privateKey).equals(Buffer.from(info.spki))) {
    throw new CertwrightError('validation_failed', 'the private key does not match the certificate');
  }
  const cn = info.subject.rdns.flat().find((a) => a.type === 'CN')?.value;
  const friendly = attribute(OID.friendlyName, bmpString(options.friendlyName ?? cn ?? 'certwright'));
  // localKeyId ties the key bag to its certificate bag (RFC 7292 §4.2); SHA-1 of the cert as OpenSSL does.
  const localKeyId = attribute(OID.localKeyId, octetString(createHash('sha1').update(certificate).digest()));

  const certBags = sequence(
    certBag(certificate, [friendly, localKeyId]),
    ...(options.chain ?? []).map((c) => certBag(c, [])),
  );

  const shrouded = pbes2Encrypt(exportPkcs8Der(privateKey), password, iterations);
  const keyBag = sequence(
    oid(OID.pkcs8ShroudedKeyBag),
    explicit(0, sequence(shrouded.algorithm, octetString(shrouded.ciphertext))),
    setOf(friendly, localKeyId),
  );
  // The key bag is already encrypted, so its SafeContents travels in a plain data ContentInfo.
  const keyContentInfo = sequence(oid(OID.data), explicit(0, octetString(sequence(keyBag))));

  const authSafe = sequence(encryptedContentInfo(certBags, password, iterations), keyContentInfo);
  const macSalt = randomBytes(16);
  const macKey = pkcs12Kdf(password, macSalt, 3, iterations, 32);
  const mac = createHmac('sha256', macKey).update(authSafe).digest();
  const macData = sequence(sequence(SHA256_ALG, octetString(mac)), octetString(macSalt), integer(iterations));

  return sequence(integer(3), sequence(oid(OID.data), explicit(0, octetString(authSafe))), macData);
}
