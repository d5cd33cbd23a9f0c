// Says once, before the run, which real services the suites will use and which tests will be skipped.
export default function servicesBanner(): void {
  const postgres = process.env.DATABASE_URL
    ? `PostgreSQL at DATABASE_URL, plus PGlite`
    : "PGlite only (set DATABASE_URL to also run the store suites against a real PostgreSQL)";
  const redis = process.env.REDIS_URL
    ? "Redis at REDIS_URL"
    : 'none: every test named "[REDIS_URL]" is SKIPPED (set REDIS_URL to run them)';
  console.log(`\n[blocks tests] store: ${postgres}\n[blocks tests] cache: ${redis}\n`);
}
