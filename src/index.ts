/**
 * `relcast`: publishing as a function, for scripts. The other entry points
 * are `relcast/hmac`, `relcast/gateway-client` and `relcast/sparkle`.
 */
export { publish, type PublishOptions, type PublishResult, type PublishStepEvent } from "./api/publish.js";
export { RelcastError, EXIT_CODES, isRelcastError, type ErrorCode } from "./core/errors.js";
export { createLogger, silentLogger, type Logger, type LoggerOptions } from "./core/logger.js";
export type { ReleaseRecord } from "./domain/record-schema.js";
export type { ReleasePlan, PlannedWrite } from "./domain/release-plan.js";
export type { AutoupdateFlags } from "./domain/autoupdate-options.js";
