import { constants, createHash, type KeyObject, privateDecrypt, publicEncrypt } from 'node:crypto';
import { fail, isCertwrightError } from '../../errors.js';
import {
  algorithmIdentifier,
  implicitPrimitive,
  integer,
  NULL,
  octetString,
  oid,
  sequence,
  setOf,
  Tag,
} from '../der.js';
import {
  children,
  content,
  type DerBounds,
  type DerNode,
  expectTag,
  malformed,
  readOid,
  readRoot,
  readSmallInteger,
} from '../der-reader.js';
import { importSpkiDer } from '../keys.js';
import { certificatePublicKey } from './certificate-cache.js';
import {
  type ContentCipher,
  type ContentEncryption,
  decryptContent,
  encryptContent,
  readContentCipher,
} from './content-encryption.js';
import { CMS_OID } from './oids.js';
import { rsaPkcs1v15Decrypt } from './rsa-pkcs1-decrypt.js';
import {
  type AlgorithmIdentifier,
  boundedDer,
  type CmsIdentifier,
  contentInfo,
  identifies,
  issuerAndSerialOf,
  octets,
  parametersAbsentOrNull,
  readAlgorithm,
  readContentInfo,
  readIssuerAndSerial,
} from './structure.js';

/**
 * EnvelopedData (RFC 5652 §6) with RSA key transport: RSAES-PKCS1-v1_5 (RFC 3370 §4.2.1) to
 * write and read, RSAES-OAEP (RFC 3560) to read. Other recipient kinds (key agreement, KEK,
 * password) are skipped when reading and never written.
 */

/** Whom to encrypt for: a certificate (named by issuer and serial), or a bare RSA key and its key identifier. */
export type EnvelopeRecipient =
  | { certificate: Uint8Array }
  | { spki: Uint8Array; subjectKeyIdentifier: Uint8Array };

export interface BuildEnvelopedDataOptions {
  content: Uint8Array;
  recipient: EnvelopeRecipient;
  contentEncryption: 'aes-256-cbc' | 'aes-128-cbc';
  /** The type of `content`; id-data by default. */
  contentType?: string;
}

/** Encrypts `content` for one RSA recipient; returns the ContentInfo DER. */
export function buildEnvelopedData(options: BuildEnvelopedDataOptions): Buffer {
  let key: KeyObject;
  let rid: Buffer;
  let ktriVersion: number;
  if ('certificate' in options.recipient) {
    key = certificatePublicKey(options.recipient.certificate);
    rid = issuerAndSerialOf(options.recipient.certificate);
    ktriVersion = 0;
  } else {
    key = importSpkiDer(options.recipient.spki);
    rid = implicitPrimitive(0, options.recipient.subjectKeyIdentifier);
    ktriVersion = 2;
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw fail('key_not_allowed', 'the recipient key must be RSA (key transport)');
  }
  const { key: cek, algorithm, ciphertext } = encryptContent(options.contentEncryption, options.content);
  const encryptedKey = publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, cek);
  cek.fill(0);
  const ktri = sequence(
    integer(ktriVersion),
    rid,
    algorithmIdentifier(CMS_OID.rsaEncryption, NULL),
    octetString(encryptedKey),
  );
  const eci = sequence(oid(options.contentType ?? CMS_OID.data), algorithm, implicitPrimitive(0, ciphertext));
  return contentInfo(CMS_OID.envelopedData, sequence(integer(ktriVersion === 0 ? 0 : 2), setOf(ktri), eci));
}

// ---------------------------------------------------------------------------------------------
// Reading

/** One KeyTransRecipientInfo as found in a message. */
export interface KeyTransRecipient {
  id: CmsIdentifier;
  /** keyEncryptionAlgorithm OID: rsaEncryption or id-RSAES-OAEP. */
  keyEncryption: string;
}

export interface EnvelopedDataInfo {
  /** Type of the encrypted content (id-data for SCEP and EST). */
  contentType: string;
  /** The content-encryption algorithm by name, or its OID when certwright does not know it. */
  contentEncryption: ContentEncryption | string;
  /** Key-transport recipients, in message order; other recipient kinds are not listed. */
  recipients: KeyTransRecipient[];
}

interface ParsedEnvelope extends EnvelopedDataInfo {
  algorithm: AlgorithmIdentifier;
  ktri: { id: CmsIdentifier; keyEncryption: AlgorithmIdentifier; encryptedKey: Uint8Array }[];
  encryptedContent: Uint8Array;
}

const KNOWN_CIPHERS: Record<string, ContentEncryption> = {
  [CMS_OID.aes128Cbc]: 'aes-128-cbc',
  [CMS_OID.aes192Cbc]: 'aes-192-cbc',
  [CMS_OID.aes256Cbc]: 'aes-256-cbc',
  [CMS_OID.desEde3Cbc]: 'des-ede3-cbc',
  [CMS_OID.desCbc]: 'des-cbc',
};

function readRecipientId(der: Uint8Array, node: DerNode | undefined, what: string): CmsIdentifier {
  if (node?.tag === 0x80) return { subjectKeyIdentifier: content(der, node) };
  return { issuerAndSerialNumber: readIssuerAndSerial(der, node, what) };
}

/** The encryptedContent [0] IMPLICIT OCTET STRING: primitive, or chunked (BER) under a constructed tag. */
function readEncryptedContent(der: Uint8Array, node: DerNode | undefined): Uint8Array {
  if (!node) throw malformed('encryptedContent', 'missing (detached content is not supported)');
  if (node.tag === 0x80) return content(der, node);
  if (node.tag === 0xa0)
    return Buffer.concat(children(der, node).map((c) => octets(der, c, 'encryptedContent')));
  throw malformed('encryptedContent', `unexpected tag 0x${node.tag.toString(16)}`);
}

function parseEnvelope(input: Uint8Array, limits: Partial<DerBounds> | undefined): ParsedEnvelope {
  const der = boundedDer(input, limits, 'envelopedData');
  const ed = expectTag(
    readContentInfo(der, CMS_OID.envelopedData, 'envelopedData'),
    Tag.SEQUENCE,
    'EnvelopedData',
  );
  const parts = children(der, ed);
  let i = 0;
  const version = readSmallInteger(der, parts[i++], 'EnvelopedData.version');
  if (version < 0 || version > 4) throw malformed('EnvelopedData.version', `unknown version ${version}`);
  if (parts[i]?.tag === 0xa0) i++; // originatorInfo: certificates we do not need
  const ris = children(der, expectTag(parts[i++], Tag.SET, 'recipientInfos'));
  if (ris.length === 0) throw malformed('recipientInfos', 'empty');
  const ktri: ParsedEnvelope['ktri'] = [];
  for (const ri of ris) {
    if (ri.tag !== Tag.SEQUENCE) continue; // kari [1], kekri [2], pwri [3], ori [4]
    const f = children(der, ri);
    const v = readSmallInteger(der, f[0], 'KeyTransRecipientInfo.version');
    if (v !== 0 && v !== 2) throw malformed('KeyTransRecipientInfo.version', `unknown version ${v}`);
    if (f.length !== 4) throw malformed('KeyTransRecipientInfo', 'must hold version, rid, algorithm and key');
    ktri.push({
      id: readRecipientId(der, f[1], 'KeyTransRecipientInfo.rid'),
      keyEncryption: readAlgorithm(der, f[2], 'keyEncryptionAlgorithm'),
      encryptedKey: octets(der, f[3], 'encryptedKey'),
    });
  }
  const eci = children(der, expectTag(parts[i++], Tag.SEQUENCE, 'encryptedContentInfo'));
  const contentType = readOid(der, eci[0], 'encryptedContentInfo.contentType');
  const algorithm = readAlgorithm(der, eci[1], 'contentEncryptionAlgorithm');
  const encryptedContent = readEncryptedContent(der, eci[2]);
  if (eci.length > 3) throw malformed('encryptedContentInfo', 'unexpected fields');
  if (parts[i]?.tag === 0xa1) i++; // unprotectedAttrs: nothing certwright reads
  if (i !== parts.length) throw malformed('EnvelopedData', 'unexpected fields');
  return {
    contentType,
    contentEncryption: KNOWN_CIPHERS[algorithm.oid] ?? algorithm.oid,
    recipients: ktri.map((r) => ({ id: r.id, keyEncryption: r.keyEncryption.oid })),
    algorithm,
    ktri,
    encryptedContent,
  };
}

/** What an EnvelopedData says about itself, without decrypting it. */
export function describeEnvelopedData(der: Uint8Array, limits?: Partial<DerBounds>): EnvelopedDataInfo {
  const { contentType, contentEncryption, recipients } = parseEnvelope(der, limits);
  return { contentType, contentEncryption, recipients };
}

export interface OpenEnvelopedDataOptions {
  /** The recipient's RSA private key. */
  privateKey: KeyObject;
  /**
   * The recipient's certificate: selects the RecipientInfo that names it (by issuer and serial
   * or subject key identifier). Without it the message must have exactly one key-transport
   * recipient.
   */
  certificate?: Uint8Array;
  /** Accept content encrypted with single DES (legacy SCEP clients); refused by default. */
  allowSingleDes?: boolean;
  limits?: Partial<DerBounds>;
}

// OAEP (RFC 4055 §4.1): hash [0], maskGen [1] (MGF1 with the same hash), pSource [2] (empty).
const OAEP_HASHES: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

function oaepHash(alg: AlgorithmIdentifier): string {
  if (!alg.parameters) return 'sha1';
  const p = alg.parameters;
  let hash = 'sha1';
  let mgfHash = 'sha1';
  for (const field of children(p, expectTag(readRoot(p), Tag.SEQUENCE, 'RSAES-OAEP-params'))) {
    const [inner] = children(p, field);
    const a = readAlgorithm(p, inner, 'RSAES-OAEP-params');
    if (field.tag === 0xa0) {
      hash = OAEP_HASHES[a.oid] ?? reject(`OAEP hash ${a.oid}`);
    } else if (field.tag === 0xa1) {
      if (a.oid !== CMS_OID.mgf1 || !a.parameters) reject(`OAEP mask generation ${a.oid}`);
      const mgf = readAlgorithm(a.parameters!, readRoot(a.parameters!), 'MGF1 hash');
      mgfHash = OAEP_HASHES[mgf.oid] ?? reject(`MGF1 hash ${mgf.oid}`);
    } else if (field.tag === 0xa2) {
      const label = a.parameters ? content(a.parameters, readRoot(a.parameters)) : new Uint8Array();
      if (a.oid !== CMS_OID.pSpecified || label.length !== 0) reject('an OAEP label');
    } else {
      throw malformed('RSAES-OAEP-params', 'unexpected field');
    }
  }
  if (hash !== mgfHash) reject('OAEP with different hash and MGF1 hash');
  return hash;
}

const reject = (what: string): never => {
  throw fail('signature_algorithm_not_allowed', `${what} is not supported`);
};

/**
 * The content-encryption key, never an error that depends on the ciphertext: PKCS#1 v1.5 uses
 * implicit rejection (a synthetic key on bad padding), OAEP failures become a key derived from
 * the encrypted key. A key of the wrong length is replaced by a derived one of the right length,
 * selected without a branch, so every bad key fails the same way: at content decryption.
 */
function unwrapKey(
  privateKey: KeyObject,
  alg: AlgorithmIdentifier,
  encryptedKey: Uint8Array,
  keyLength: number,
): Buffer {
  let cek: Buffer;
  if (alg.oid === CMS_OID.rsaEncryption) {
    if (!parametersAbsentOrNull(alg))
      throw malformed('keyEncryptionAlgorithm', 'rsaEncryption parameters must be NULL');
    cek = rsaPkcs1v15Decrypt(privateKey, encryptedKey);
  } else if (alg.oid === CMS_OID.rsaesOaep) {
    const hash = oaepHash(alg);
    try {
      cek = privateDecrypt(
        { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash },
        encryptedKey,
      );
    } catch {
      cek = Buffer.alloc(0);
    }
  } else {
    throw fail('signature_algorithm_not_allowed', `key transport ${alg.oid} is not supported`);
  }
  const fallback = createHash('sha256').update(encryptedKey).update(cek).digest();
  const padded = Buffer.alloc(keyLength);
  padded.set(cek.subarray(0, keyLength));
  // -1 when the length is right, else 0 (lengths are small non-negative integers).
  const good = -(((cek.length ^ keyLength) - 1) >>> 31);
  const out = Buffer.alloc(keyLength);
  for (let i = 0; i < keyLength; i++) out[i] = (padded[i]! & good) | (fallback[i % 32]! & ~good);
  cek.fill(0);
  padded.fill(0);
  return out;
}

/**
 * Decrypts an EnvelopedData addressed to `privateKey` and returns the content. Fails with
 * `not_found` when no recipient names the given certificate, `signature_algorithm_not_allowed`
 * for an algorithm certwright does not accept (single DES unless allowed), `malformed` /
 * `too_large` for bytes that are not a bounded EnvelopedData, and `signature_invalid` — always
 * the same error — when the content does not decrypt (wrong key, bad key transport padding,
 * altered content).
 */
export function openEnvelopedData(der: Uint8Array, options: OpenEnvelopedDataOptions): Buffer {
  const env = parseEnvelope(der, options.limits);
  let recipient: ParsedEnvelope['ktri'][number] | undefined;
  if (options.certificate) {
    const cert = options.certificate;
    recipient = env.ktri.find((r) => identifies(r.id, cert));
    if (!recipient) throw fail('not_found', 'no recipient of the enveloped data is this certificate');
  } else {
    if (env.ktri.length !== 1) {
      throw fail('invalid_input', 'the enveloped data has several recipients: name the certificate to use');
    }
    recipient = env.ktri[0]!;
  }
  const c: ContentCipher = readContentCipher(env.algorithm, options.allowSingleDes ?? false);
  let key: Buffer | undefined;
  try {
    key = unwrapKey(options.privateKey, recipient.keyEncryption, recipient.encryptedKey, c.cipher.keyLength);
    return decryptContent(c, key, env.encryptedContent);
  } catch (cause) {
    if (isCertwrightError(cause)) throw cause;
    throw fail('signature_invalid', 'the enveloped content could not be decrypted', { cause });
  } finally {
    key?.fill(0);
  }
}
