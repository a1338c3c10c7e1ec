import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fail } from '../../errors.js';
import { algorithmIdentifier, octetString, Tag } from '../der.js';
import { content, expectTag, readRoot } from '../der-reader.js';
import { CMS_OID } from './oids.js';
import type { AlgorithmIdentifier } from './structure.js';

/**
 * Content-encryption algorithms of EnvelopedData: AES-CBC (RFC 3565) to write and read,
 * DES-EDE3-CBC (RFC 3370 §5.1) to read — older SCEP clients send it —, and single DES only when
 * the caller opts in (see {@link OpenEnvelopedDataOptions.allowSingleDes}): its 56-bit key is
 * brute-forced in hours. Every algorithm is CBC with an IV as the OCTET STRING parameter.
 */
export type ContentEncryption = 'aes-128-cbc' | 'aes-192-cbc' | 'aes-256-cbc' | 'des-ede3-cbc' | 'des-cbc';

interface Cipher {
  name: ContentEncryption;
  oid: string;
  keyLength: number;
  ivLength: number;
}

const CIPHERS: Record<string, Cipher> = {
  [CMS_OID.aes128Cbc]: { name: 'aes-128-cbc', oid: CMS_OID.aes128Cbc, keyLength: 16, ivLength: 16 },
  [CMS_OID.aes192Cbc]: { name: 'aes-192-cbc', oid: CMS_OID.aes192Cbc, keyLength: 24, ivLength: 16 },
  [CMS_OID.aes256Cbc]: { name: 'aes-256-cbc', oid: CMS_OID.aes256Cbc, keyLength: 32, ivLength: 16 },
  [CMS_OID.desEde3Cbc]: { name: 'des-ede3-cbc', oid: CMS_OID.desEde3Cbc, keyLength: 24, ivLength: 8 },
  [CMS_OID.desCbc]: { name: 'des-cbc', oid: CMS_OID.desCbc, keyLength: 8, ivLength: 8 },
};

const BY_NAME = new Map(Object.values(CIPHERS).map((c) => [c.name, c]));

/** A content-encryption algorithm identified in a message, with its IV. */
export interface ContentCipher {
  cipher: Cipher;
  iv: Uint8Array;
}

/**
 * The algorithm and IV of an EncryptedContentInfo. Unknown algorithms and single DES (unless
 * allowed) fail with `signature_algorithm_not_allowed` — the reason every protocol maps to its
 * "unsupported algorithm" answer (SCEP badAlg).
 */
export function readContentCipher(alg: AlgorithmIdentifier, allowSingleDes: boolean): ContentCipher {
  const cipher = CIPHERS[alg.oid];
  if (!cipher)
    throw fail('signature_algorithm_not_allowed', `content encryption algorithm ${alg.oid} is not supported`);
  if (cipher.name === 'des-cbc' && !allowSingleDes) {
    throw fail(
      'signature_algorithm_not_allowed',
      'content encrypted with single DES is refused (56-bit key)',
    );
  }
  if (!alg.parameters) throw fail('malformed', 'content encryption parameters (IV) are missing');
  const iv = content(alg.parameters, expectTag(readRoot(alg.parameters), Tag.OCTET_STRING, 'IV'));
  if (iv.length !== cipher.ivLength)
    throw fail('malformed', `${cipher.name} needs a ${cipher.ivLength}-octet IV`);
  return { cipher, iv };
}

export const keyLengthOf = (name: ContentEncryption): number => BY_NAME.get(name)!.keyLength;

/**
 * Node's OpenSSL 3 has single DES only in its legacy provider, but DES-EDE3 with three equal
 * keys is single DES (E_K ∘ D_K ∘ E_K = E_K), so DES runs through des-ede3-cbc.
 */
function nodeCipher(cipher: Cipher, key: Uint8Array): { algorithm: string; key: Uint8Array } {
  if (cipher.name === 'des-cbc') return { algorithm: 'des-ede3-cbc', key: Buffer.concat([key, key, key]) };
  return { algorithm: cipher.name, key };
}

/**
 * Decrypts CBC content with PKCS#7 padding. Any failure — wrong key, bad padding, a length that
 * is not a multiple of the block — is the same `signature_invalid` error with the same text, so
 * that nothing tells a wrong key (an implicitly rejected RSA key transport) from bad content.
 */
export function decryptContent(c: ContentCipher, key: Uint8Array, ciphertext: Uint8Array): Buffer {
  const { algorithm, key: k } = nodeCipher(c.cipher, key);
  try {
    const d = createDecipheriv(algorithm, k, c.iv);
    return Buffer.concat([d.update(ciphertext), d.final()]);
  } catch {
    throw fail('signature_invalid', 'the enveloped content could not be decrypted');
  }
}

/** Encrypts with a fresh key and IV; returns the key, the AlgorithmIdentifier and the ciphertext. */
export function encryptContent(
  name: Exclude<ContentEncryption, 'des-cbc' | 'des-ede3-cbc'>,
  plaintext: Uint8Array,
): { key: Buffer; algorithm: Buffer; ciphertext: Buffer } {
  const cipher = BY_NAME.get(name);
  if (!cipher || !name.startsWith('aes-')) {
    throw fail('signature_algorithm_not_allowed', `content encryption '${String(name)}' is not offered`);
  }
  const key = randomBytes(cipher.keyLength);
  const iv = randomBytes(cipher.ivLength);
  const e = createCipheriv(cipher.name, key, iv);
  const ciphertext = Buffer.concat([e.update(plaintext), e.final()]);
  return { key, algorithm: algorithmIdentifier(cipher.oid, octetString(iv)), ciphertext };
}
