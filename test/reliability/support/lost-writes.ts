// A PostgreSQL trigger that makes the block's completion write (PROCESSING -> SUCCESS) fail, for chosen keys.
import type pg from "pg";

/**
 * Keys starting with `lost-` can never be marked SUCCESS; keys starting with `flaky-` fail every
 * other attempt (a sequence, which a failed transaction does not roll back), so one retry lands.
 */
export async function injectLostWrites(pool: pg.Pool, table: string): Promise<{ remove(): Promise<void> }> {
  const fn = `${table}_lose_write`;
  await pool.query(`CREATE SEQUENCE ${fn}_seq`);
  await pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status = 'PROCESSING' AND NEW.status = 'SUCCESS'
         AND (NEW.key LIKE 'lost-%' OR (NEW.key LIKE 'flaky-%' AND nextval('${fn}_seq') % 2 = 1)) THEN
        RAISE EXCEPTION 'injected fault: the completion write was lost';
      END IF;
      RETURN NEW;
    END $$`);
  await pool.query(`CREATE TRIGGER ${fn} BEFORE UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  return {
    async remove() {
      await pool.query(`DROP TRIGGER IF EXISTS ${fn} ON ${table}`);
      await pool.query(`DROP FUNCTION IF EXISTS ${fn}()`);
      await pool.query(`DROP SEQUENCE IF EXISTS ${fn}_seq`);
    },
  };
}
