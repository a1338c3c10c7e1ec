/** Runs one deployment in a process of its own, so a test can SIGKILL it half-way. */
import { nginxConnector } from '../../src/index.js';

const args = JSON.parse(process.env.DEPLOY_ARGS ?? '{}');
await nginxConnector({
  allowedDirs: args.allowedDirs,
  validateCommand: args.validate,
  reloadCommand: args.reload,
}).deploy(args.target, args.material);
