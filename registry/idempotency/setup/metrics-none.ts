// No metrics sink (`add --metrics none`): the handler counts nothing. `add --metrics prometheus` exports them.
import { noopMetrics, type IdempotencyMetrics } from "../metrics";

export const metrics: IdempotencyMetrics = noopMetrics;
