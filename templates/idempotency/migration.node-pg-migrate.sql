-- {{title}}
-- Rendered by `blocks migrate` from the idempotency block's schema (stores/postgres-schema.ts).

-- Up Migration
{{up}}

-- Down Migration
{{down}}
