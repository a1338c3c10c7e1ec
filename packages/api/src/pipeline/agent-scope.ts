import type { Principal } from '../auth/principal.js';
import { problem } from '../http/problem.js';
import { AGENT_OPERATION_IDS } from '../routes/agents.js';

/**
 * An agent key opens only the agent's own routes (heartbeat, work, CSR, job status): the 403
 * for an agent anywhere else — any other operation, any protocol mount. `operationId` is the
 * REST operation asked for; undefined for a mount.
 */
export function agentScopeRefusal(
  principal: Principal | null,
  operationId: string | undefined,
  requestId: string,
): Response | undefined {
  if (principal?.kind !== 'agent') return undefined;
  if (operationId !== undefined && AGENT_OPERATION_IDS.has(operationId)) return undefined;
  return problem({
    status: 403,
    code: 'forbidden',
    detail: 'agent keys may call only agent routes',
    requestId,
  });
}
