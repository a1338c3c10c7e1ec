export {
  type Authenticator,
  type AuthSettings,
  apiKeyAuthenticator,
  type Principal,
} from './auth/principal.js';
export { isPublicPath, PUBLIC_ROUTES, requiresAuthentication } from './auth/public-routes.js';
export {
  type CertwrightHandler,
  createHandler,
  type HandlerOptions,
  type ResponseEvent,
} from './create-handler.js';
export { problem, STATUS_BY_CODE } from './http/problem.js';
export {
  defineRoute,
  type HttpMethod,
  type JsonResult,
  type RouteInput,
  type RouteSpec,
} from './http/route.js';
export type { OpenApiDocument } from './openapi/document.js';
export type { ReadinessCheck, VersionInfo } from './routes/system.js';
