// Wires the idempotency block into this app: written once by `blocks add`, yours to edit (`add` never replaces it).
// The wiring is block code in blocks/idempotency/setup/, which `blocks update` keeps up to date (merging your edits):
// database.ts (your client), cache.ts, app-logger.ts, metrics.ts (and metrics-route.ts), composed in index.ts.
export * from "../index";
