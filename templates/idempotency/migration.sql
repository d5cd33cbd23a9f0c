-- {{title}}
-- Rendered by `blocks migrate` from the idempotency block's schema (stores/postgres-schema.ts).
-- Every statement is IF NOT EXISTS, so running this file again changes nothing.
{{up}}
