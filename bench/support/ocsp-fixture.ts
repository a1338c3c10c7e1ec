import { type createServices, SYSTEM_ACTOR } from '../../packages/core/src/index.js';
import { buildCertId, der, readCertificate } from '../../packages/core/src/pki/index.js';

/**
 * A Local issuer with one issued certificate, the CertID of that certificate and an
 * OCSPRequest for it without a nonce: what the OCSP benches ask about.
 */
export async function issueOcspFixture(services: ReturnType<typeof createServices>) {
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: 'bench ocsp',
    type: 'Local',
    config: { key_algorithm: 'ECDSA-P256' },
  });
  const cert = await services.certificates.create(SYSTEM_ACTOR, {
    name: 'ocsp',
    common_name: 'ocsp.bench.test',
    renewal_policy_id: 'rp-default',
    issuer_id: issuer.id,
    owner_id: owner.id,
    team_id: team.id,
  });
  const issued = await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, {});
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), issued.version!.serial_number, 'sha1').der;
  const body = der.sequence(der.sequence(der.sequence(der.sequence(certId))));
  return { issuerId: issuer.id, certId, body };
}
