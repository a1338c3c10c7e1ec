import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { DirectPath, Handler } from '../../packages/core/src/index.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '../../packages/core/src/pki/index.js';
import { attachDirectConnections } from '../../packages/server/src/direct-connections.js';
import { createRequestListener } from '../../packages/server/src/index.js';

/**
 * A handler behind the server's own listener on 127.0.0.1, TLS 1.3, with a keep-alive client
 * agent; a handler with a direct entry gets the server's direct connections too (tls-server.ts).
 */
export interface BenchListener {
  server: Server;
  port: number;
  agent: Agent;
  /** PEM of the self-signed certificate the listener presents: what a client must trust. */
  ca: string;
  close(): Promise<void>;
}

/** A self-signed P-256 certificate for 127.0.0.1, valid for a day, and its key, both PEM: every bench listener's TLS identity. */
export async function loopbackTlsIdentity(): Promise<{ certPem: string; keyPem: string }> {
  const key = await generateKeyPair('ECDSA-P256');
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=127.0.0.1',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      subjectAltNames: [{ type: 'ip', value: '127.0.0.1' }],
      basicConstraints: { ca: true },
    },
    key.privateKey,
  );
  return { certPem: certificateToPem(cert.der), keyPem: exportPkcs8Pem(key.privateKey) };
}

export async function listenTls(
  handler: Handler & { direct?: DirectPath },
  maxSockets: number,
): Promise<BenchListener> {
  const { certPem: ca, keyPem } = await loopbackTlsIdentity();
  const server = createServer(
    { minVersion: 'TLSv1.3', cert: ca, key: keyPem },
    createRequestListener(handler),
  );
  const direct = handler.direct
    ? attachDirectConnections({ server, event: 'secureConnection', direct: handler.direct })
    : undefined;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets, ca });
  return {
    server,
    port,
    agent,
    ca,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      direct?.closeAll();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
