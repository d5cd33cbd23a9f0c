// The shape of bench/results/latest.json: run metadata, every scenario's figures, and the targets.
import type { CliResult } from "../scenarios/cli-time";
import type { OverheadRow } from "../scenarios/http-overhead";
import type { JobScale } from "../scenarios/job-scale";
import type { PeerRow } from "../scenarios/peers";
import type { RoundTripCase } from "../scenarios/round-trips";
import type { CoreCostRow } from "../scenarios/core-cost";
import type { CpuRow } from "../scenarios/server-cpu";
import type { TransactionalResult } from "../scenarios/transactional";
import type { MySqlFloorResult } from "../scenarios/mysql-floor";
import type { OutboxRelayResult } from "../scenarios/outbox-relay";
import type { RateLimiterResult } from "../scenarios/rate-limiter";
import type { ErrorHandlerResult } from "../scenarios/error-handler";
import type { ScaleOutResult } from "../scenarios/scale-out-stores";
import type { ProfileSummary } from "../support/cpu-profile";

export type Target = { target: string; measured: string; met: boolean };

export type BenchResults = {
  meta: {
    command: string;
    startedAt: string;
    durationSeconds: number;
    node: string;
    cpus: number;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
    settings: Record<string, unknown>;
    scenarios: string[];
  };
  roundTrips?: RoundTripCase[];
  overhead?: OverheadRow[];
  cpu?: CpuRow[];
  coreCost?: CoreCostRow[];
  peers?: PeerRow[];
  transactional?: TransactionalResult;
  mysqlFloor?: MySqlFloorResult;
  outbox?: OutboxRelayResult;
  rateLimiter?: RateLimiterResult;
  errorHandler?: ErrorHandlerResult;
  scaleOut?: ScaleOutResult;
  jobs?: JobScale[];
  cli?: (CliResult & { profileSummary?: ProfileSummary }) | undefined;
  serverProfiles?: Array<{ label: string; summary: ProfileSummary }> | undefined;
  targets: Target[];
};
