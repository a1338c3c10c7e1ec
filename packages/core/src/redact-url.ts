/** Connection URLs in logs and messages: every storage and queue driver renders its URL through this. */
const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * Query parameters that carry credentials in connection URLs (libpq's `password` and
 * `sslpassword`, MySQL drivers' `password`, tokens and keys of HTTP endpoints …), compared
 * case-insensitively.
 */
export const CREDENTIAL_QUERY_PARAMETERS: readonly string[] = [
  'password',
  'passwd',
  'pass',
  'pwd',
  'sslpassword',
  'secret',
  'client_secret',
  'token',
  'access_token',
  'auth',
  'api_key',
  'apikey',
  'key',
  'sslkey',
];

/**
 * Renders a connection URL for logs and messages: the password of the user-info and the value
 * of every credential query parameter are replaced.
 */
export function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    // Only the credential values change; every other parameter keeps its exact spelling.
    parsed.search = parsed.search.replace(/([?&;])([^=&;]+)=([^&;]*)/g, (whole, separator, name) =>
      CREDENTIAL_QUERY_PARAMETERS.includes(safeDecode(name).toLowerCase())
        ? `${separator}${name}=***`
        : whole,
    );
    return parsed.toString();
  } catch {
    return '[unparsable url]';
  }
}
