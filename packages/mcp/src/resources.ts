import { X509Certificate } from 'node:crypto';
import { type CertwrightClient, ProblemError } from '@certwright/client';
import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * Resources: what a host can attach to a conversation without a tool call. A certificate
 * (decoded summary and PEM), an issuer's CA chain, and the dashboard counts.
 */

export const CERTIFICATE_URI = 'certwright://certificates/{id}';
export const CHAIN_URI = 'certwright://issuers/{id}/chain';
export const DASHBOARD_URI = 'certwright://dashboard';

/** JSON-RPC code the MCP specification gives a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: CERTIFICATE_URI,
    name: 'certificate',
    title: 'Certificate',
    description:
      'A managed certificate: status, owner, team, issuer and renewal policy by name, the decoded latest version (subject, issuer, serial, validity, SANs, key, fingerprint), then its PEM with the CA chain',
    mimeType: 'text/plain',
  },
  {
    uriTemplate: CHAIN_URI,
    name: 'issuer-chain',
    title: 'Issuer CA chain',
    description: "An issuer's CA certificates as PEM, issuing CA first",
    mimeType: 'application/x-pem-file',
  },
];

const DASHBOARD: Resource = {
  uri: DASHBOARD_URI,
  name: 'dashboard',
  title: 'Dashboard',
  description: 'Counts of certificates by status and expiring soon, agents, jobs and notifications by status',
  mimeType: 'application/json',
};

const PAGE = 50;

/** The dashboard, then the certificates, newest first, a page at a time (the cursor is the page). */
export async function listResources(
  client: CertwrightClient,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const page = cursor === undefined ? 1 : Number(cursor);
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000)
    throw new McpError(ErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}`);
  const answer = (await client.callRaw('listCertificates', { query: { page, per_page: PAGE } })) as {
    data: { id: string; name: string; common_name: string; status: string; expires_at: string | null }[];
    total: number;
  };
  const resources = answer.data.map((c) => ({
    uri: `certwright://certificates/${encodeURIComponent(c.id)}`,
    name: c.name,
    title: `${c.name} (${c.common_name})`,
    description: `${c.status}${c.expires_at ? `, expires ${c.expires_at}` : ''}`,
    mimeType: 'text/plain',
  }));
  return {
    resources: page === 1 ? [DASHBOARD, ...resources] : resources,
    ...(page * PAGE < answer.total ? { nextCursor: String(page + 1) } : {}),
  };
}

export async function readResource(client: CertwrightClient, uri: string): Promise<ReadResourceResult> {
  try {
    if (uri === DASHBOARD_URI) {
      const summary = await client.callRaw('getDashboardSummary', {});
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(summary, null, 2) }] };
    }
    const certificate = /^certwright:\/\/certificates\/([^/]+)$/.exec(uri);
    if (certificate) {
      const text = await certificateText(client, decodeURIComponent(certificate[1] as string));
      return { contents: [{ uri, mimeType: 'text/plain', text }] };
    }
    const chain = /^certwright:\/\/issuers\/([^/]+)\/chain$/.exec(uri);
    if (chain) {
      const answer = (await client.callRaw('getIssuerChain', {
        path: { id: decodeURIComponent(chain[1] as string) },
      })) as { bytes: Uint8Array };
      return {
        contents: [{ uri, mimeType: 'application/x-pem-file', text: new TextDecoder().decode(answer.bytes) }],
      };
    }
  } catch (error) {
    if (error instanceof ProblemError && error.status === 404)
      throw new McpError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri });
    throw error;
  }
  throw new McpError(
    RESOURCE_NOT_FOUND,
    `unknown resource ${uri} (certwright://certificates/{id}, certwright://issuers/{id}/chain, certwright://dashboard)`,
    { uri },
  );
}

interface Certificate {
  id: string;
  name: string;
  common_name: string;
  sans: string[];
  status: string;
  owner_id: string;
  team_id: string;
  issuer_id: string;
  renewal_policy_id: string;
  profile_id: string | null;
  environment: string | null;
  tags: string[];
  expires_at: string | null;
  last_renewal_at: string | null;
  created_at: string;
}

interface Version {
  serial_number: string;
  fingerprint_sha256: string;
  key_algorithm: string;
  key_size: number;
  not_before: string;
  not_after: string;
  cert_pem: string;
  chain_pem: string;
  revoked_at: string | null;
  revocation_reason: string | null;
}

const DAY = 86_400_000;

/** The name of a referenced record, with its id; the id alone where it cannot be read. */
async function named(client: CertwrightClient, operationId: string, id: string | null): Promise<string> {
  if (!id) return 'none';
  try {
    const record = (await client.callRaw(operationId, { path: { id } })) as { name?: string };
    return record.name ? `${record.name} (${id})` : id;
  } catch {
    return id;
  }
}

function when(iso: string, now: number): string {
  const days = Math.round((Date.parse(iso) - now) / DAY);
  return days >= 0 ? `in ${days} day${days === 1 ? '' : 's'}` : `${-days} day${days === -1 ? '' : 's'} ago`;
}

async function certificateText(client: CertwrightClient, id: string): Promise<string> {
  const certificate = (await client.callRaw('getCertificate', { path: { id } })) as Certificate;
  const versions = (await client.callRaw('listCertificateVersions', {
    path: { id },
    query: { per_page: 1 },
  })) as { data: Version[]; total: number };
  const [owner, team, issuer, policy, profile] = await Promise.all([
    named(client, 'getOwner', certificate.owner_id),
    named(client, 'getTeam', certificate.team_id),
    named(client, 'getIssuer', certificate.issuer_id),
    named(client, 'getRenewalPolicy', certificate.renewal_policy_id),
    named(client, 'getProfile', certificate.profile_id),
  ]);
  const now = Date.now();
  const lines = [
    `Certificate ${certificate.id} "${certificate.name}" for ${certificate.common_name}`,
    `Status: ${certificate.status}`,
    `Owner: ${owner}; team: ${team}`,
    `Issuer: ${issuer}; renewal policy: ${policy}; profile: ${profile}`,
    `Names requested: ${[certificate.common_name, ...certificate.sans.filter((s) => s !== certificate.common_name)].join(', ')}`,
    ...(certificate.environment ? [`Environment: ${certificate.environment}`] : []),
    ...(certificate.tags.length > 0 ? [`Tags: ${certificate.tags.join(', ')}`] : []),
    `Created: ${certificate.created_at}${certificate.last_renewal_at ? `; last renewed ${certificate.last_renewal_at}` : ''}`,
  ];
  const latest = versions.data[0];
  if (!latest) {
    lines.push('', `Not issued yet (${certificate.status}): there is no certificate to decode.`);
    return `${lines.join('\n')}\n`;
  }
  const x509 = new X509Certificate(latest.cert_pem);
  lines.push(
    '',
    `Latest version (${versions.total} in all):`,
    `  Subject: ${x509.subject.replace(/\n/g, ', ')}`,
    `  Issued by: ${x509.issuer.replace(/\n/g, ', ')}`,
    `  Serial: ${latest.serial_number}`,
    `  Valid: ${latest.not_before} to ${latest.not_after} (expires ${when(latest.not_after, now)})`,
    `  Subject alternative names: ${x509.subjectAltName ?? 'none'}`,
    `  Key: ${latest.key_algorithm}${latest.key_size ? `, ${latest.key_size} bits` : ''}`,
    `  SHA-256 fingerprint: ${latest.fingerprint_sha256}`,
    ...(latest.revoked_at
      ? [`  Revoked: ${latest.revoked_at} (${latest.revocation_reason ?? 'unspecified'})`]
      : []),
    '',
    'PEM (certificate, then its CA chain):',
    latest.cert_pem.trimEnd(),
    ...(latest.chain_pem.trim() ? [latest.chain_pem.trimEnd()] : []),
  );
  return `${lines.join('\n')}\n`;
}
