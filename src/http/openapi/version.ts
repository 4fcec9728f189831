/**
 * The REST API's version: the OpenAPI document's `info.version` and every response's
 * `API-Version` (set by middleware/basics.ts `responseHeaders`). Within a major version changes are additive only (docs/decisions.md).
 */
export const API_VERSION = '1.0.0';
