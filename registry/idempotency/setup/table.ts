// The table (or key prefix) the records live in. `blocks add --table` writes its name here; `blocks migrate` creates it.
export const IDEMPOTENCY_TABLE: string = "idempotency_records";
