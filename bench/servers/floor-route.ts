// The floor: a hand-written Express route doing only what exactly-once needs on PostgreSQL, nothing more.
import type { RequestHandler } from "express";
import type pg from "pg";
import { charge } from "./payment";

const OPERATION = "POST /payments";
const USER = "u_bench";

/**
 * First request: `INSERT ... ON CONFLICT DO NOTHING RETURNING` then `UPDATE` (two round trips).
 * Replay: the insert returns nothing, then one `SELECT` sends the stored body. No fingerprint, no
 * fencing check, no timeouts, no heartbeat, no cache: the least any correct implementation can do.
 */
export function floorRoute(pool: pg.Pool, table: string): RequestHandler {
  const insert = `INSERT INTO ${table} (operation, user_id, key, request_hash, status, token, expires_at)
    VALUES ($1, $2, $3, '', 'PROCESSING', gen_random_uuid(), now() + interval '1 day')
    ON CONFLICT (operation, user_id, key) DO NOTHING RETURNING token`;
  const update = `UPDATE ${table} SET status = 'SUCCESS', response = $4, updated_at = now()
    WHERE operation = $1 AND user_id = $2 AND key = $3`;
  const select = `SELECT status, response FROM ${table} WHERE operation = $1 AND user_id = $2 AND key = $3`;

  return async function floor(req, res, next) {
    try {
      const key = req.get("idempotency-key") ?? "";
      const inserted = await pool.query(insert, [OPERATION, USER, key]);
      if (inserted.rows.length === 1) {
        const body = JSON.stringify(charge(req.body));
        await pool.query(update, [OPERATION, USER, key, body]);
        res.status(201).type("application/json").send(body);
        return;
      }
      const { rows } = await pool.query<{ status: string; response: string }>(select, [OPERATION, USER, key]);
      if (rows[0]?.status === "SUCCESS") res.status(201).type("application/json").send(rows[0].response);
      else res.status(409).json({ error: { code: "REQUEST_IN_PROGRESS", message: "in progress" } });
    } catch (err) {
      next(err);
    }
  };
}
