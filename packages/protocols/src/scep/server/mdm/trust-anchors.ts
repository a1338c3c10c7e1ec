import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fail, isCertwrightError } from '@certwright/core';
import {
  type CertificateInfo,
  decodeKeyUsage,
  defaultJwsAlgorithm,
  OID,
  pemDecodeAll,
  readCertificate,
} from '@certwright/core/pki';

/**
 * The device-management signing certificates of each profile, read from the PEM file its
 * `mdm.trust_bundle_path` names. A challenge names its signer by the SHA-256 thumbprint of
 * the certificate (`x5t#S256`); only certificates in this file can sign, and no key or
 * certificate carried in the token is ever used. Loaded on first use; a reload replaces the
 * anchors only once the new file has been read and every certificate in it accepted, so a
 * failed reload leaves the previous anchors in force.
 */

export interface MdmSigner {
  info: CertificateInfo;
  /** SHA-256 of the DER certificate, as `x5t#S256` carries it. */
  thumbprint: Buffer;
  key: KeyObject;
}

export interface MdmAnchorSet {
  path: string;
  signers: readonly MdmSigner[];
  loadedAt: Date;
}

/** Signing certificates one file may hold (key rollover needs two; a fleet of MDMs a few). */
export const MAX_MDM_SIGNERS = 32;
const MAX_PEM_CHARS = 256 * 1024;

/**
 * Parses a PEM file of MDM signing certificates. Refuses (`invalid_input`, or the parsers'
 * `malformed`/`too_large`/`key_rejected`) a file without certificates, other PEM blocks, a
 * key no challenge algorithm uses, and a certificate whose key usage excludes
 * digitalSignature, naming the certificate by position.
 */
export function parseMdmSigners(pem: string): MdmSigner[] {
  const blocks = pemDecodeAll(pem, { maxChars: MAX_PEM_CHARS, maxBlocks: MAX_MDM_SIGNERS });
  if (blocks.length === 0) throw fail('invalid_input', 'the MDM trust file holds no PEM certificate');
  return blocks.map((block, index) => {
    const position = `certificate ${index + 1} of the MDM trust file`;
    if (block.label !== 'CERTIFICATE') {
      throw fail('invalid_input', `${position} is a ${block.label}, not a CERTIFICATE`);
    }
    let info: CertificateInfo;
    try {
      info = readCertificate(block.der);
    } catch (cause) {
      if (!isCertwrightError(cause)) throw cause;
      throw fail(cause.reason, `${position}: ${cause.message}`, { cause });
    }
    if (!defaultJwsAlgorithm(info.publicKey)) {
      throw fail('invalid_input', `${position} (${info.subject.text}) has a key no challenge algorithm uses`);
    }
    const ku = info.extensions.find((e) => e.oid === OID.keyUsage);
    if (ku && !decodeKeyUsage(ku.value).includes('digitalSignature')) {
      throw fail('invalid_input', `${position} (${info.subject.text}) does not allow digitalSignature`);
    }
    let key: KeyObject;
    try {
      key = createPublicKey({ key: Buffer.from(info.spki), format: 'der', type: 'spki' });
    } catch (cause) {
      throw fail('key_rejected', `${position} (${info.subject.text}) has a key that is not usable`, {
        cause,
      });
    }
    return { info, thumbprint: createHash('sha256').update(block.der).digest(), key };
  });
}

export class MdmTrustAnchors {
  readonly #sets = new Map<string, MdmAnchorSet>();
  readonly #loading = new Map<string, Promise<MdmAnchorSet>>();

  constructor(private readonly read: (path: string) => Promise<string> = (path) => readFile(path, 'utf8')) {}

  /**
   * The anchors of a profile for `path`, loaded on first use (and when the path changed). A
   * first load that fails throws and is tried again on the next call.
   */
  async get(profileId: string, path: string, now: Date): Promise<MdmAnchorSet> {
    const current = this.#sets.get(profileId);
    if (current && current.path === path) return current;
    const key = `${profileId}\0${path}`;
    let loading = this.#loading.get(key);
    if (!loading) {
      loading = this.reload(profileId, path, now).finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    return loading;
  }

  /**
   * Reads and parses the file; on success its signers replace the profile's anchors at once,
   * on failure nothing changes and the typed error says why (`unavailable` when the file
   * cannot be read).
   */
  async reload(profileId: string, path: string, now: Date): Promise<MdmAnchorSet> {
    let text: string;
    try {
      text = await this.read(path);
    } catch (cause) {
      if (isCertwrightError(cause)) throw cause;
      const code = (cause as { code?: unknown })?.code;
      throw fail(
        'unavailable',
        `the MDM trust file cannot be read${typeof code === 'string' ? ` (${code})` : ''}`,
        { cause },
      );
    }
    const set: MdmAnchorSet = { path, signers: Object.freeze(parseMdmSigners(text)), loadedAt: now };
    this.#sets.set(profileId, set);
    return set;
  }

  /** The anchors in force for a profile, without loading; undefined when none are. */
  peek(profileId: string): MdmAnchorSet | undefined {
    return this.#sets.get(profileId);
  }
}
