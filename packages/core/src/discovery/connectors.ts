/**
 * Cloud discovery sources (the sentinel agents `cloud-aws-sm`, `cloud-azure-kv`,
 * `cloud-gcp-sm`): each lists the certificates a cloud secret store holds and reports them as
 * its agent id. certwright ships the interface only; an embedder that can reach the cloud
 * implements it and feeds the results to `DiscoveryService.reportHostDiscovery` (the `path`
 * of each entry names the secret). See docs/api/discovery.md.
 */
export interface CloudDiscoveryConnector {
  /** One of the cloud sentinel agent ids. */
  readonly source: 'cloud-aws-sm' | 'cloud-azure-kv' | 'cloud-gcp-sm';
  /** Every certificate the store holds, as PEM with the secret's name or ARN as `path`. */
  list(signal?: AbortSignal): AsyncIterable<{ path: string; pem: string }>;
}
