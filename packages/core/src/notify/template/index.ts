export { ALERT_TEMPLATE_VARIABLES, type AlertTemplateData } from './alert.js';
export { pathEscape, queryEscape } from './functions.js';
export {
  DEFAULT_TEMPLATE_LIMITS,
  DEFAULT_URL_TEMPLATE_LIMITS,
  type ParsedTemplate,
  parseTemplate,
  parseUrlTemplate,
  renderTemplate,
  renderUrlTemplate,
  type TemplateLimits,
  type TemplateOptions,
} from './template.js';
