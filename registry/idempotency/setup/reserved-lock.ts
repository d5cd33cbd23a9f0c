// postgres.js has no `connect()`: the maintenance's session advisory lock is taken and released on one reserved connection.
import type { Sql } from "postgres";
import type { LockClient } from "../maintenance";
import type { SqlClient } from "../stores/postgres-store";

/**
 * @example
 * lockedJobs(handler, reservedLock(sql), logger);
 */
export function reservedLock(sql: Sql): LockClient {
  const on = (client: Pick<Sql, "unsafe">): SqlClient => ({ query: async (text, params = []) => ({ rows: await client.unsafe(text, params as never[]) }) });
  return {
    ...on(sql),
    async connect() {
      const reserved = await sql.reserve();
      return { ...on(reserved), release: () => reserved.release() };
    },
  };
}
