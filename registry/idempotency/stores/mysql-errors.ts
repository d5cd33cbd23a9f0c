// The server errors MySqlStore tells apart: a deadlock, a lock wait that gave up, and a procedure its schema lacks.

/** ER_LOCK_DEADLOCK: InnoDB chose this statement as the victim; nothing it did remains. */
const DEADLOCK = 1213;
/** ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout passed while the statement waited for a row lock. */
const LOCK_WAIT_TIMEOUT = 1205;
/** ER_SP_DOES_NOT_EXIST: the schema lacks the create procedure this code calls. */
const NO_SUCH_PROCEDURE = 1305;

export function isDeadlock(err: unknown): boolean {
  return errorNumber(err) === DEADLOCK;
}

/** A lock wait that gave up (1205), or a deadlock between two waiters on one key (1213). */
export function isLockWaitOrDeadlock(err: unknown): boolean {
  const errno = errorNumber(err);
  return errno === LOCK_WAIT_TIMEOUT || errno === DEADLOCK;
}

/**
 * The code shipped before the migration that adds its procedure `name`: said plainly, never retried as a
 * transient outage. Undefined when `err` is another error.
 */
export function missingProcedure(err: unknown, name: string): Error | undefined {
  if (errorNumber(err) !== NO_SUCH_PROCEDURE) return undefined;
  return new Error(
    `MySqlStore: the database has no procedure ${name}. Apply the migration \`blocks migrate\` writes for this version ` +
      "(it adds the procedure beside the earlier one) before deploying the code that calls it.",
    { cause: err },
  );
}

function errorNumber(err: unknown): unknown {
  return typeof err === "object" && err !== null ? (err as { errno?: unknown }).errno : undefined;
}
