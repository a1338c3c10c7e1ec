export { type OpenApiOperation, type ProtocolMount, tooManyRequestsText } from '@certwright/protocols/mount';
export {
  type Authenticator,
  type AuthSettings,
  apiKeyAuthenticator,
  holds,
  type Principal,
  tenantOf,
} from './auth/principal.js';
export {
  CSRF_COOKIE,
  CSRF_HEADER,
  clearedSessionCookies,
  csrfTokenFor,
  SESSION_COOKIE,
  sessionCookies,
  sessionTokenOf,
} from './auth/session-cookie.js';
export {
  type CertwrightHandler,
  createHandler,
  type HandlerOptions,
  type ResponseEvent,
  responseEventOf,
} from './create-handler.js';
export {
  type ClientAddressResolver,
  clientKey,
  socketClientAddress,
  trustedProxyClientAddress,
} from './http/client-address.js';
export { problem, STATUS_BY_CODE } from './http/problem.js';
export {
  DEFAULT_RATE_LIMITS,
  RATE_LIMIT_CLASSES,
  type RateLimitClass,
  type RateLimitSettings,
} from './http/rate-limit.js';
export {
  defineRoute,
  type HttpMethod,
  type JsonResult,
  type PublicAccess,
  type RouteInput,
  type RouteSpec,
} from './http/route.js';
export { CONSOLE_CSP, PAGE_SECURITY_HEADERS } from './http/security-headers.js';
export type { OpenApiDocument } from './openapi/document.js';
export type { ReadinessCheck, VersionInfo } from './routes/system.js';
