// The message of the NOTIFICATIONS queue: one notification delivery, named by its key (the row
// in D1 holds the rest). Here, with the other queues' messages, so env.ts types its bindings
// without importing the jobs that consume them.

export interface DeliveryMessage {
  key: string;
}
