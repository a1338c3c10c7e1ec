import { oid, sequence, setOf } from './der.js';
import { NAME_ATTRIBUTE_OIDS, OID } from './oids.js';

/**
 * The `/csrattrs` answer (RFC 7030 §4.5.2, RFC 9908): a SEQUENCE of AttrOrOID derived from a
 * profile's required CSR attributes. Distinguished-name attributes and PKCS#9 attributes are
 * listed by their OIDs; required extended key usages become one extensionRequest attribute
 * naming the extKeyUsage extension. Names certwright does not know are returned in
 * `dropped` (the caller logs them) and left out.
 */

const PKCS9_ATTRIBUTES: Record<string, string> = {
  challengePassword: OID.challengePassword,
  extensionRequest: OID.extensionRequest,
  unstructuredName: '1.2.840.113549.1.9.2',
};

const EKU_NAMES = new Set(['serverAuth', 'clientAuth', 'codeSigning', 'emailProtection', 'timeStamping']);

export interface CsrAttributes {
  /** DER of CsrAttrs; null when the profile requires nothing (the route answers 204). */
  der: Buffer | null;
  /** Attribute names that map to nothing certwright knows. */
  dropped: string[];
}

export function csrAttributesFor(required: readonly string[]): CsrAttributes {
  const oids: string[] = [];
  const dropped: string[] = [];
  let wantsEku = false;
  const add = (value: string) => {
    if (!oids.includes(value)) oids.push(value);
  };
  for (const name of required) {
    if (name in PKCS9_ATTRIBUTES) add(PKCS9_ATTRIBUTES[name]!);
    else if (EKU_NAMES.has(name)) wantsEku = true;
    else if (name.toUpperCase() in NAME_ATTRIBUTE_OIDS) add(NAME_ATTRIBUTE_OIDS[name.toUpperCase()]!);
    else if (/^\d+(\.\d+)+$/.test(name)) add(name);
    else dropped.push(name);
  }
  const items: Buffer[] = oids.map((o) => oid(o));
  // RFC 7030 §4.5.2: an Attribute of type extensionRequest whose values name the extensions wanted.
  if (wantsEku) items.push(sequence(oid(OID.extensionRequest), setOf(oid(OID.extKeyUsage))));
  return { der: items.length === 0 ? null : sequence(...items), dropped };
}
