// The work every benchmarked route does: a tiny synchronous "charge" that builds the response body.

export type PaymentBody = { amount?: unknown; currency?: unknown };

let sequence = 0;

/** Returns the created payment; cheap on purpose, so the figures show the idempotency layer's cost. */
export function charge(body: PaymentBody): { id: string; amount: unknown; currency: unknown; status: "captured" } {
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  return { id: `pay_${sequence}`, amount: body.amount, currency: body.currency, status: "captured" };
}
