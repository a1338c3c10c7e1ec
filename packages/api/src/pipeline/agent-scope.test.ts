import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import { AGENT_OPERATION_IDS } from '../routes/agents.js';
import { agentScopeRefusal } from './agent-scope.js';

const agent: Principal = { kind: 'agent', id: 'agt_1', permissions: new Set(['agent.self']) };
const admin: Principal = { kind: 'api-key', id: 'api-key', permissions: 'all' };

describe('agentScopeRefusal', () => {
  it("lets an agent key call the agent's own operations", () => {
    expect(AGENT_OPERATION_IDS.size).toBeGreaterThan(0);
    for (const operationId of AGENT_OPERATION_IDS) {
      expect(agentScopeRefusal(agent, operationId, 'req')).toBeUndefined();
    }
  });

  it('refuses an agent key any other operation and every protocol mount', async () => {
    for (const operationId of ['listCertificates', undefined]) {
      const refused = agentScopeRefusal(agent, operationId, 'req-4');
      expect(refused?.status).toBe(403);
      expect(await refused?.json()).toMatchObject({
        detail: 'agent keys may call only agent routes',
        request_id: 'req-4',
      });
    }
  });

  it('does not concern other principals', () => {
    expect(agentScopeRefusal(admin, 'listCertificates', 'req')).toBeUndefined();
    expect(agentScopeRefusal(null, undefined, 'req')).toBeUndefined();
  });
});
