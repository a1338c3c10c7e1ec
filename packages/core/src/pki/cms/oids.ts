/** Object identifiers of CMS (RFC 5652) and the algorithms it carries, named as in their RFCs. */
export const CMS_OID = {
  // Content types (RFC 5652 §4–§6)
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  envelopedData: '1.2.840.113549.1.7.3',
  // Attributes (RFC 5652 §11)
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  // Key transport (RFC 3370 §4.2, RFC 3560)
  rsaEncryption: '1.2.840.113549.1.1.1',
  rsaesOaep: '1.2.840.113549.1.1.7',
  mgf1: '1.2.840.113549.1.1.8',
  pSpecified: '1.2.840.113549.1.1.9',
  // Content encryption (RFC 3565, RFC 3370 §5.1; single DES: FIPS 81 / OIW)
  aes128Cbc: '2.16.840.1.101.3.4.1.2',
  aes192Cbc: '2.16.840.1.101.3.4.1.22',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  desEde3Cbc: '1.2.840.113549.3.7',
  desCbc: '1.3.14.3.2.7',
} as const;
