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

export { JavaKeystoreConnector, type KeystoreOptions } from './keystore.js';
export { readIdentity, SshConnector, type SshOptions } from './ssh.js';
