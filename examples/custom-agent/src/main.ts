/**
 * A complete custom agent: the SDK's loop with one connector of our own. Run it with the
 * agent's usual variables (SVC_SERVER_URL, SVC_AGENT_ID, SVC_AGENT_API_KEY[_FILE],
 * SVC_SERVER_CA_BUNDLE_PATH) and TRAEFIK_DYNAMIC_DIR.
 */
import { join } from 'node:path';
import { AgentKeyStore, CertwrightAgent, connectionFromEnv, jsonLogger } from '@certwright/agent';
import { TraefikFileConnector } from './traefik-connector.js';

export function createCustomAgent(env: NodeJS.ProcessEnv, stateDir: string, pollIntervalMs = 30_000) {
  const directory = env.TRAEFIK_DYNAMIC_DIR;
  if (!directory) throw new Error('TRAEFIK_DYNAMIC_DIR is required');
  return new CertwrightAgent({
    connection: connectionFromEnv(env),
    connectors: [new TraefikFileConnector(directory)],
    keyStore: new AgentKeyStore(join(stateDir, 'keys')),
    logger: jsonLogger(),
    pollIntervalMs,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const agent = createCustomAgent(process.env, process.env.STATE_DIR ?? './state');
  process.once('SIGTERM', () => agent.stop());
  agent.run().then((reason) => console.log(JSON.stringify({ msg: 'agent ended', reason })));
}
