import type { Logger, Services } from '@certwright/core';
import { type LeasedTask, type SchedulerContext, startLeasedTask } from './lease-runner.js';

/**
 * Default tick of the CRL refresh. A CRL is due again after the service's CRL refresh (1 h) or
 * its issuer's `delta_crl` intervals (at least a minute); a one-minute tick rebuilds each within
 * a minute of being due.
 */
export const CRL_REFRESH_INTERVAL_MS = 60_000;
const PAGE = 100;

/**
 * Keeps published CRLs fresh: CRLs are built on a fetch or a revocation, so without this a
 * publishing directory whose issuer nobody fetches from would keep files past their nextUpdate.
 * Each tick asks for every enabled issuer's current CRL and delta CRL; the service answers the
 * cached ones and rebuilds (and so publishes) those that are due. The server starts it only
 * when SVC_CRL_PUBLISH_DIR is set. One instance per tick.
 */
export function startCrlRefresh(
  options: SchedulerContext & { services: Services; intervalMs?: number },
): LeasedTask {
  return startLeasedTask({
    holder: options.holder,
    ephemeral: options.ephemeral,
    logger: options.logger,
    onTick: options.onTick,
    name: 'scheduler:crl-refresh',
    intervalMs: options.intervalMs ?? CRL_REFRESH_INTERVAL_MS,
    run: () => refreshCrls(options.services, options.logger),
  });
}

/** One pass over the enabled issuers; one issuer's failure does not stop the others. */
export async function refreshCrls(
  services: Services,
  logger: Logger,
): Promise<{ issuers: number; failed: number }> {
  const status = services.pki.revocationStatus;
  let issuers = 0;
  let failed = 0;
  for (let page = 1; ; page += 1) {
    const { data, total } = await services.issuers.list({ page, per_page: PAGE, enabled: true });
    for (const issuer of data) {
      try {
        // Null for issuers whose CRLs this service does not sign (an external ACME CA).
        if (await status.currentCrl(issuer.id)) issuers += 1;
        await status.currentDeltaCrl(issuer.id);
      } catch (error) {
        failed += 1;
        logger.warn({ err: error, issuer_id: issuer.id }, 'crl refresh: building the CRL failed');
      }
    }
    if (data.length === 0 || page * PAGE >= total) break;
  }
  // A tick with a failed issuer counts as failed (certwright_scheduler_ticks_total).
  if (failed > 0) throw new Error(`${failed} of the enabled issuers' CRLs could not be built`);
  return { issuers, failed };
}
