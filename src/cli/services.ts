/**
 * `createServices` for `ipintel lookup` (src/cli/lookup.ts), which still
 * imports it from here: it lives in src/server/services.ts. Kept only until
 * that import is repointed (the streaming-bulk branch edits lookup.ts too).
 */

export { createServices } from "../server/services.ts";
