// The invoicing module's durable job queue. Charging queues a completed session's bill here (cpo-events.ts, when
// its CDR arrives); invoicing requeues unfinished bills (bill.ts); src/modules.ts runs the bill job for it.
export const INVOICING_QUEUES = {
  /** Bill a completed session: its CDR -> priced -> settled -> invoiced (bill.ts). */
  bill: 'invoicing.bill',
} as const;
