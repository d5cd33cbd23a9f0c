// Cron entry: runs the idempotency maintenance once, closes every client and exits. Schedule its compiled file every 5 minutes.
import { createIdempotency } from "./idempotency-setup";

const idempotency = createIdempotency();
idempotency
  .runMaintenanceOnce()
  .catch((err: unknown) => {
    console.error("idempotency maintenance failed", err);
    process.exitCode = 1;
  })
  .finally(() => idempotency.close());
