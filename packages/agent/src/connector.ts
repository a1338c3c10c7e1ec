/**
 * What a deployment connector does for one kind of target. The agent calls `deploy` for a
 * Deployment job, `testConnection` for a target connection test and `verify` for the
 * verification of a completed deployment. A connector that cannot finish a deployment must
 * leave the previous certificate in place and serving (`rollback`) and throw an error whose
 * message is the job's failure reason — never one that contains key material.
 */
export interface DeploymentConnector {
  /** The target type it serves, as the server names it (`NGINX`, `Apache`, …). */
  readonly type: string;
  deploy(target: ConnectorTarget, material: DeploymentMaterial): Promise<DeploymentOutcome>;
  /** Checks the service's configuration as it is now (e.g. `nginx -t`). */
  validate(target: ConnectorTarget): Promise<void>;
  /** Puts back what the last deploy replaced and reloads. */
  rollback(target: ConnectorTarget): Promise<void>;
  /** Whether the target is reachable and configured well enough to deploy to. */
  testConnection(target: ConnectorTarget): Promise<Record<string, unknown>>;
  /** Whether the endpoint serves the deployed certificate. */
  verify(target: ConnectorTarget, expected?: { fingerprint256?: string }): Promise<VerificationOutcome>;
}

export interface ConnectorTarget {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
}

/** The version to install; the private key is the server's or the one this host generated. */
export interface DeploymentMaterial {
  versionId: string;
  serialNumber: string;
  certPem: string;
  chainPem: string | null;
  privateKeyPem: string;
}

export interface DeploymentOutcome {
  /** SHA-256 fingerprint (hex, lower case) of the leaf now in place. */
  fingerprint256: string;
  /** Result of the post-deployment check, when the target names an endpoint. */
  verification?: VerificationOutcome;
  /** Files written, for the job result. */
  files: string[];
}

export interface VerificationOutcome {
  ok: boolean;
  detail: string;
  servedFingerprint256?: string;
  servedSerial?: string;
}

/** A failure whose message is safe to report to the server as the job's error. */
export class DeploymentError extends Error {
  override name = 'DeploymentError';
}
