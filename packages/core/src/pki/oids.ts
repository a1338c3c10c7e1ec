/** Object identifiers used across core/pki, named as in their RFCs. */
export const OID = {
  // Signature and key algorithms (RFC 4055, RFC 5758, RFC 8410)
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha1WithRSAEncryption: '1.2.840.113549.1.1.5',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  sha384WithRSAEncryption: '1.2.840.113549.1.1.12',
  sha512WithRSAEncryption: '1.2.840.113549.1.1.13',
  rsassaPss: '1.2.840.113549.1.1.10',
  idEcPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSHA1: '1.2.840.10045.4.1',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA384: '1.2.840.10045.4.3.3',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
  idEd25519: '1.3.101.112',
  idEd448: '1.3.101.113',
  // Hashes
  idSha1: '1.3.14.3.2.26',
  idSha256: '2.16.840.1.101.3.4.2.1',
  idSha384: '2.16.840.1.101.3.4.2.2',
  idSha512: '2.16.840.1.101.3.4.2.3',
  // Certificate extensions (RFC 5280)
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  cRLNumber: '2.5.29.20',
  cRLReason: '2.5.29.21',
  invalidityDate: '2.5.29.24',
  nameConstraints: '2.5.29.30',
  cRLDistributionPoints: '2.5.29.31',
  /** Delta CRL Indicator (RFC 5280 §5.2.4), critical in every delta CRL. */
  deltaCRLIndicator: '2.5.29.27',
  /** Freshest CRL, a.k.a. delta CRL distribution point (RFC 5280 §4.2.1.15). */
  freshestCRL: '2.5.29.46',
  /** No revocation information available (RFC 9608 §2): short-lived certificates. */
  noRevAvail: '2.5.29.56',
  certificatePolicies: '2.5.29.32',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  tlsFeature: '1.3.6.1.5.5.7.1.24',
  // Access methods
  idAdOcsp: '1.3.6.1.5.5.7.48.1',
  idAdCaIssuers: '1.3.6.1.5.5.7.48.2',
  // Extended key usages (RFC 5280 §4.2.1.12)
  idKpServerAuth: '1.3.6.1.5.5.7.3.1',
  idKpClientAuth: '1.3.6.1.5.5.7.3.2',
  idKpCodeSigning: '1.3.6.1.5.5.7.3.3',
  idKpEmailProtection: '1.3.6.1.5.5.7.3.4',
  idKpTimeStamping: '1.3.6.1.5.5.7.3.8',
  idKpOCSPSigning: '1.3.6.1.5.5.7.3.9',
  anyExtendedKeyUsage: '2.5.29.37.0',
  // OCSP (RFC 6960, RFC 8954)
  idPkixOcspBasic: '1.3.6.1.5.5.7.48.1.1',
  idPkixOcspNonce: '1.3.6.1.5.5.7.48.1.2',
  idPkixOcspNocheck: '1.3.6.1.5.5.7.48.1.5',
  // PKCS#9 attributes (RFC 2985)
  emailAddress: '1.2.840.113549.1.9.1',
  challengePassword: '1.2.840.113549.1.9.7',
  extensionRequest: '1.2.840.113549.1.9.14',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  // CMS content types (RFC 5652) and PKCS#12 bags (RFC 7292)
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  // PBES2 (RFC 8018) and AES (RFC 3565)
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacWithSHA256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
} as const;

/** Extended key usages by the names the profiles and the REST API use. */
export const EKU_OIDS = {
  serverAuth: OID.idKpServerAuth,
  clientAuth: OID.idKpClientAuth,
  codeSigning: OID.idKpCodeSigning,
  emailProtection: OID.idKpEmailProtection,
  timeStamping: OID.idKpTimeStamping,
  OCSPSigning: OID.idKpOCSPSigning,
} as const;

export type ExtendedKeyUsage = keyof typeof EKU_OIDS;

/** Attribute types of distinguished names (X.520, RFC 4519) by their RFC 4514 short names. */
export const NAME_ATTRIBUTE_OIDS: Record<string, string> = {
  CN: '2.5.4.3',
  SN: '2.5.4.4',
  SERIALNUMBER: '2.5.4.5',
  C: '2.5.4.6',
  L: '2.5.4.7',
  ST: '2.5.4.8',
  STREET: '2.5.4.9',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  TITLE: '2.5.4.12',
  GIVENNAME: '2.5.4.42',
  DC: '0.9.2342.19200300.100.1.25',
  UID: '0.9.2342.19200300.100.1.1',
  E: OID.emailAddress,
  EMAILADDRESS: OID.emailAddress,
};
