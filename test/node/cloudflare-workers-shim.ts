// Enough of the workerd module for the app's code to be imported in Node; nothing here runs.
export class DurableObject {}
export class WorkerEntrypoint {}
export const env = {};
