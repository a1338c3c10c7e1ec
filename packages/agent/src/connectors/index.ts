import { FileServerConnector, type FileServerOptions } from './file-server.js';

export { runCommand } from './command.js';
export { type FileLayout, FileServerConnector, type FileServerOptions } from './file-server.js';

/** NGINX: full chain and key in two files; `nginx -t`, then `nginx -s reload`. */
export const nginxConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('NGINX', 'fullchain', {
    validateCommand: ['nginx', '-t'],
    reloadCommand: ['nginx', '-s', 'reload'],
    ...o,
  });

/** Apache httpd: leaf, chain and key in three files; `apachectl configtest`, graceful reload. */
export const apacheConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('Apache', 'separate', {
    validateCommand: ['apachectl', 'configtest'],
    reloadCommand: ['apachectl', 'graceful'],
    ...o,
  });

/** HAProxy: one combined PEM (leaf, chain, key); `haproxy -c`, then a reload of the service. */
export const haproxyConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('HAProxy', 'combined', {
    validateCommand: ['haproxy', '-c', '-f', '/etc/haproxy/haproxy.cfg'],
    reloadCommand: ['systemctl', 'reload', 'haproxy'],
    ...o,
  });

/**
 * Caddy: full chain and key files named by a Caddyfile `tls <cert> <key>` directive;
 * `caddy validate`, then `caddy reload --force` (without `--force` Caddy skips a reload whose
 * configuration text is unchanged, and the new files would not be read).
 */
export const caddyConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('Caddy', 'fullchain', {
    validateCommand: ['caddy', 'validate', '--config', '/etc/caddy/Caddyfile', '--adapter', 'caddyfile'],
    reloadCommand: [
      'caddy',
      'reload',
      '--force',
      '--config',
      '/etc/caddy/Caddyfile',
      '--adapter',
      'caddyfile',
    ],
    ...o,
  });

/** Postfix: `smtpd_tls_chain_files = <key_path>, <cert_path>`; `postfix check`, `postfix reload`. */
export const postfixConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('Postfix', 'fullchain', {
    validateCommand: ['postfix', 'check'],
    reloadCommand: ['postfix', 'reload'],
    ...o,
  });

/** Dovecot: `ssl_cert = <cert_path` (full chain), `ssl_key = <key_path`; `doveconf -n`, `doveadm reload`. */
export const dovecotConnector = (o: Partial<FileServerOptions> & Pick<FileServerOptions, 'allowedDirs'>) =>
  new FileServerConnector('Dovecot', 'fullchain', {
    validateCommand: ['doveconf', '-n'],
    reloadCommand: ['doveadm', 'reload'],
    ...o,
  });

export {
  DynamicConfigConnector,
  type DynamicConfigOptions,
  envoyConnector,
  traefikConnector,
} from './dynamic-config.js';
export { JavaKeystoreConnector, type KeystoreOptions } from './keystore.js';
export {
  KubernetesApiError,
  type KubernetesClientOptions,
  KubernetesRestClient,
  KubernetesSecretConnector,
  type KubernetesSecretOptions,
  type KubernetesSecretsApi,
  type KubeSecret,
} from './kubernetes.js';
export { readIdentity, SshConnector, type SshOptions } from './ssh.js';
export { type FileSetSteps, type PlannedFile, replaceFiles } from './transaction.js';
