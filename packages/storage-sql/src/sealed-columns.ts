import { AUDIT_CHAIN_KEY_CONTEXT, AUDIT_CHAIN_KEY_NAME, KEY_CHECK_CONTEXT, KEY_CHECK_ID } from './keyring.js';
import { eabContext } from './repos/acme.js';
import { targetConfigContext } from './repos/agents.js';
import { secretsContext as enrollmentSecretsContext } from './repos/enrollment.js';
import { secretContext as oidcSecretContext } from './repos/people.js';
import { issuerConfigContext } from './repos/reference.js';
import { keyContext as scepRaKeyContext } from './repos/scep.js';
import { keyContext as versionKeyContext } from './repos/versions.js';
import { headersContext, urlContext } from './repos/webhooks.js';

type Row = Record<string, unknown>;

export interface SealedColumn {
  column: string;
  /** The additional authenticated data the repository seals this column's value with. */
  context: (row: Row) => string;
}

export interface SealedTable {
  table: string;
  /** The single-column primary key the re-seal walks in order. */
  key: string;
  /** Columns the contexts need besides the key. */
  select?: string[];
  columns: SealedColumn[];
  /** Only these keys hold values sealed under the ring's current key (the rest are not re-sealed). */
  only?: string;
}

const str = (row: Row, name: string) => String(row[name]);

/**
 * Every column that holds a SecretBox value, with the context its repository seals it under: what
 * a key rotation re-seals (rekey.ts). A test compares this list with the schema's `*_sealed`
 * columns, so a new sealed column cannot be forgotten.
 */
export const SEALED_TABLES: readonly SealedTable[] = [
  {
    table: 'issuers',
    key: 'id',
    columns: [{ column: 'config_sealed', context: (r) => issuerConfigContext(str(r, 'id')) }],
  },
  {
    table: 'certificate_profiles',
    key: 'id',
    columns: [
      { column: 'enrollment_secrets_sealed', context: (r) => enrollmentSecretsContext(str(r, 'id')) },
    ],
  },
  {
    table: 'acme_eab_keys',
    key: 'id',
    columns: [{ column: 'hmac_key_sealed', context: (r) => eabContext(str(r, 'id')) }],
  },
  {
    table: 'deployment_targets',
    key: 'id',
    columns: [{ column: 'config_sealed', context: (r) => targetConfigContext(str(r, 'id')) }],
  },
  {
    table: 'webhooks',
    key: 'id',
    columns: [
      { column: 'headers_sealed', context: (r) => headersContext(str(r, 'id')) },
      { column: 'url_sealed', context: (r) => urlContext(str(r, 'id')) },
    ],
  },
  {
    table: 'scep_ra_certificates',
    key: 'profile_id',
    select: ['fingerprint_sha256'],
    columns: [
      {
        column: 'private_key_sealed',
        context: (r) => scepRaKeyContext(str(r, 'profile_id'), str(r, 'fingerprint_sha256')),
      },
      {
        column: 'previous_private_key_sealed',
        context: (r) => scepRaKeyContext(str(r, 'profile_id'), 'previous'),
      },
    ],
  },
  {
    table: 'auth_oidc_providers',
    key: 'id',
    columns: [{ column: 'client_secret_sealed', context: (r) => oidcSecretContext(str(r, 'id')) }],
  },
  {
    table: 'cw_key_check',
    key: 'id',
    only: KEY_CHECK_ID,
    columns: [{ column: 'sealed', context: () => KEY_CHECK_CONTEXT }],
  },
  {
    table: 'cw_keyring',
    key: 'name',
    only: AUDIT_CHAIN_KEY_NAME,
    columns: [{ column: 'value', context: () => AUDIT_CHAIN_KEY_CONTEXT }],
  },
  // Last: by far the most rows (one per certificate version with a server-generated key).
  {
    table: 'certificate_versions',
    key: 'id',
    columns: [{ column: 'private_key_sealed', context: (r) => versionKeyContext(str(r, 'id')) }],
  },
];
